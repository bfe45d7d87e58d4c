"""What the chapters show and ask: explorers (live sliders and kernel-free scrubbers), figures, the progress
bar, the widgets of each chapter and the exercise checkers. The only package that imports ipywidgets."""
