"""Slider explorers, one module per chapter; each builds on :class:`geron_lib.explorer.Explorer`."""
