"""One float32 MLM training step: geron_lib against PyTorch eager (transformers), side by side in one run.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_train_step.py [--threads N] [--rounds R] [--sizes ...]
                                                                    [--profile]

A step is: forward, backward, gradient clipping to norm 1 and one AdamW update (lr 1e-4, weight decay 0.01
on matrices and tables only, eps 1e-6), on one batch where about 15 % of the positions are predicted.
geron_lib: ``MaskedLM.loss_and_grads``, ``clip_grad_norm`` and ``AdamW.step`` from
``geron_lib.pretraining.train``. PyTorch: transformers' ``BertForMaskedLM`` (``AlbertForMaskedLM`` for the
ALBERT-layout sizes of the trade-off experiment), dropout 0 (geron_lib has none), ``loss.backward()``,
``torch.nn.utils.clip_grad_norm_`` and ``torch.optim.AdamW``. Both models start from the same weights (the
torch model is loaded with geron_lib's), and their first losses are printed side by side as a check that
both compute the same thing. Both get the same number of threads (BLAS, OpenMP, torch intra-op), set before
numpy or torch is imported. Prints the median seconds per step of each over interleaved rounds, their
ranges, and the ratio geron_lib / PyTorch (target <= 1.3 at size "a", <= 1.2 at the trade-off grid's
sizes). Needs the hf extra.

``--profile`` then profiles geron_lib's step (cProfile over ``--rounds`` steps, CPU time): for every geron_lib
function (forward, backward, optimizer), its calls per step and its ms per step, its own and with what it
calls. It needs ``--threads 1``: with more, the batch's rows run on pool threads, which cProfile does not see.
"""

from __future__ import annotations

import argparse
import os
import time

from _thread_count import set_threads

#: "a": a mid size; "experiment-*": the context grid's narrow cells (geron_lib.studies.tradeoffs.Setup, the
#: grid's base: H 64, L 4), not shared at E = H and all shared at E = 16 (its smallest sharing-mode E)
#: "grid-wide": the context grid's wide cell (geron_lib.studies.context_grid.Grid: all shared at H 128, h 4,
#: F 512, E 64), the width bet against "experiment-none"
SIZES = ("a", "experiment-none", "experiment-all", "grid-wide")
#: The largest ratio geron_lib / PyTorch each size's target allows.
TARGET = {"a": 1.3, "experiment-none": 1.2, "experiment-all": 1.2, "grid-wide": 1.2}
LR, MAX_NORM, WEIGHT_DECAY, EPS, MASK_PROB = 1e-4, 1.0, 0.01, 1e-6, 0.15


def size(name: str):
    """(EncoderConfig, B, T) of the size ``name``."""
    from geron_lib.config import EncoderConfig
    from geron_lib.studies.tradeoffs import Setup

    if name == "a":
        return EncoderConfig(vocab_size=5000, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                             intermediate_size=1024), 16, 128
    if name == "grid-wide":
        from geron_lib.studies.context_grid import Grid

        grid = Grid()
        return grid.model_config(grid.wide_cell), grid.base.batch_size, grid.base.T
    setup = Setup()
    sharing = name.removeprefix("experiment-")
    E = (max if sharing == "none" else min)(setup.mode_embedding_sizes)
    config = setup.model_config(E, sharing)
    if not config.has_embedding_projection:
        # E = H without a projection: the same model as BERT's layout, which transformers can build
        # (its AlbertModel always has the E -> H map)
        config = config.replace(model_type="bert")
    return config, setup.batch_size, setup.T


def masked_batch(config, B: int, T: int):
    """(B, T) random words, BERT-masked with p = 0.15 (no padding: full rows, as packed text gives)."""
    import numpy as np

    from geron_lib.pretraining.masking import bert_mask
    from geron_lib.pretraining.tokenizer import WordTokenizer

    tokenizer = WordTokenizer([f"w{i}" for i in range(config.vocab_size - 5)])
    assert tokenizer.vocab_size == config.vocab_size
    ids = np.random.default_rng(0).integers(len(tokenizer.special_ids), config.vocab_size, (B, T))
    return bert_mask(ids, tokenizer, mask_prob=MASK_PROB, rng=1)


def steps(config, B: int, T: int):
    """The two training steps, ready to time, transformers' model class and both losses on the first batch
    (same weights)."""
    import numpy as np
    import torch

    from geron_lib.interop.torch_mlm import hf_masked_lm, hf_mlm_inputs, torch_adamw
    from geron_lib.model.mlm import MaskedLM
    from geron_lib.pretraining.train import AdamW, clip_grad_norm

    batch = masked_batch(config, B, T)
    ours = MaskedLM(config, seed=0, dtype=np.float32)
    theirs = hf_masked_lm(ours).train()  # dropout 0: train mode computes what eval mode does
    optimizer = AdamW(ours.parameters(), eps=EPS, weight_decay=WEIGHT_DECAY)
    torch_optimizer = torch_adamw(theirs, lr=LR, eps=EPS, weight_decay=WEIGHT_DECAY)
    inputs = hf_mlm_inputs(batch)

    def geron_step():
        loss, grads = ours.loss_and_grads(batch)
        clip_grad_norm(grads, MAX_NORM)
        optimizer.step(grads, LR)
        return loss

    def torch_step():
        torch_optimizer.zero_grad(set_to_none=True)
        loss = theirs(**inputs).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(theirs.parameters(), MAX_NORM)
        torch_optimizer.step()
        return loss.item()

    with torch.no_grad():
        first = (ours.loss(batch), theirs(**inputs).loss.item())
    fns = {"geron_lib": geron_step, "pytorch": torch_step}
    return fns, type(theirs).__name__, first, float(batch.selected.mean())


def profile(step, rounds: int) -> None:
    """cProfile over ``rounds`` calls of ``step``: every geron_lib function by its own time per step."""
    import cProfile
    import pstats

    profiler = cProfile.Profile(time.process_time)
    profiler.runcall(lambda: [step() for _ in range(rounds)])
    package = f"{os.sep}geron_lib{os.sep}"
    # (file, line, name) -> (calls, primitive calls, own seconds, inclusive seconds, callers)
    ours = {key: v for key, v in pstats.Stats(profiler).stats.items() if package in key[0]}
    print(f"  {'geron_lib function':<48}{'calls':>7}{'own ms':>9}{'with callees':>14}   (per step)")
    by_own_time = sorted(ours.items(), key=lambda kv: -kv[1][2])
    for (file, line, name), (calls, _, own, inclusive, _) in by_own_time[:24]:
        where = f"{file.split(package)[-1]}:{line} {name}"
        per_step = f"{calls / rounds:>7.0f}{own / rounds * 1e3:>9.1f}{inclusive / rounds * 1e3:>14.1f}"
        print(f"  {where:<48}{per_step}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sizes", nargs="+", choices=SIZES, default=list(SIZES))
    parser.add_argument("--profile", action="store_true", help="then profile geron_lib's step")
    args = parser.parse_args()
    if args.profile and args.threads != 1:
        parser.error("--profile needs --threads 1: with more, the rows run on threads cProfile does not see")
    set_threads(args.threads)
    import numpy as np
    import torch

    torch.set_num_threads(args.threads)
    from geron_lib.timing import sample_seconds

    print(f"numpy {np.__version__}, torch {torch.__version__}; threads: {args.threads} "
          f"(torch.get_num_threads() = {torch.get_num_threads()}, OPENBLAS_NUM_THREADS = "
          f"{os.environ['OPENBLAS_NUM_THREADS']}); float32; {args.rounds} interleaved rounds per size")
    for name in args.sizes:
        config, B, T = size(name)
        fns, class_name, (loss_ours, loss_theirs), share = steps(config, B, T)
        times = sample_seconds(fns, repeat=args.rounds, min_seconds=1e-9, clock=time.perf_counter,
                               alternate=True)
        med = {k: float(np.median(v)) for k, v in times.items()}
        ratio = med["geron_lib"] / med["pytorch"]
        print(f"({name}) {class_name}: V {config.vocab_size}, E {config.E}, H {config.hidden_size}, "
              f"L {config.num_hidden_layers}, h {config.num_attention_heads}, F {config.intermediate_size}, "
              f"{config.hidden_act}, sharing {config.sharing}; B {B}, T {T}, {share:.1%} of positions "
              f"predicted; first loss {loss_ours:.5f} (geron_lib) vs {loss_theirs:.5f} (PyTorch)")
        for k in ("geron_lib", "pytorch"):
            print(f"  {k:<10} median {med[k] * 1e3:8.1f} ms   (range {min(times[k]) * 1e3:.1f} .. "
                  f"{max(times[k]) * 1e3:.1f} ms)")
        print(f"  ratio geron_lib / PyTorch = {ratio:.2f}   (target <= {TARGET[name]}: "
              f"{'meets the target' if ratio <= TARGET[name] else 'MISSES the target'})")
        if args.profile:
            profile(fns["geron_lib"], args.rounds)


if __name__ == "__main__":
    main()
