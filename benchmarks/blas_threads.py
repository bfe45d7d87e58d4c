"""Why train_mlm caps BLAS at one thread: one epoch of the chapter's experiment, timed side by side with
one BLAS thread and with no cap, alternating, medians of five runs each. (Without the cap a step this small
still runs on one thread: MaskedLM picks one thread below model.threads.SMALL_STEP.)

Run from the repository root:  .venv/bin/python benchmarks/blas_threads.py
"""

import statistics
import time

from geron_lib.model.mlm import MaskedLM
from geron_lib.pretraining.masking import MaskingSchedule
from geron_lib.pretraining.train import TrainingConfig, train_mlm
from geron_lib.studies import dynamic_masking as mx
from geron_lib.timing import sample_seconds

setup = mx.Setup()
tokenizer, train_ids, _ = mx.data(setup)
config = mx.model_config(setup, tokenizer.vocab_size)
schedule = MaskingSchedule(train_ids, tokenizer, "dynamic")


def epoch(threads):
    training = TrainingConfig(epochs=1, batch_size=setup.batch_size, blas_threads=threads)
    return lambda: train_mlm(MaskedLM(config, dtype=setup.dtype), schedule, training)


# a fresh model each time (its creation is timed too: a few ms); alternating, wall clock
times = sample_seconds({1: epoch(1), None: epoch(None)}, repeat=5, min_seconds=1e-9,
                       clock=time.perf_counter, alternate=True)
one, uncapped = (statistics.median(times[k]) for k in (1, None))
print(f"one epoch ({len(train_ids)} sentences): 1 BLAS thread {one * 1e3:.0f} ms, "
      f"uncapped {uncapped * 1e3:.0f} ms, ratio {uncapped / one:.2f}")
