"""Where the float32 forward's time goes, op by op, against the time of its matrix products at sgemm speed.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/profile_forward.py [--threads N] [--rounds R] [--preset P]
                                                                   [--cpu]

Runs the encoder forward of ``geron_lib.model.encoder`` one op at a time (the library's own kernels, in the
library's order), timing every op with the wall clock, on a padded batch at B = 8, T = 128 (albert-base-v2
by default, random weights). Every op is summed over the layers; each round also times the library's
forward in one piece and a 4096 x 4096 numpy sgemm, interleaved. Prints one row per op: the median ms per
forward, its share of the op-by-op total, and for a matrix product its GFLOP and the ms it would take at
the sgemm rate of this run. The op-by-op output is checked to equal the library's forward exactly, and the
sum of the ops is printed beside the library's own time, so the profile cannot drift from the code. Both
run the kernels on the whole batch on one Python thread (``Encoder.forward``): with more than one thread,
``Encoder``'s calls share the batch's rows out between threads, above the kernels
(``geron_lib.model.threads``).
``--cpu`` times with this process's CPU time instead (other jobs on a shared machine then do not count;
it equals wall time for one thread only, so it needs ``--threads 1``).
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections import defaultdict
from contextlib import contextmanager

from _thread_count import set_threads

B, T, N_SGEMM = 8, 128, 4096


class OpTimer:
    """Seconds of ``clock`` and matmul FLOPs per op name, summed over every call in one forward."""

    def __init__(self, clock=time.perf_counter):
        self.clock = clock
        self.seconds, self.flops, self.calls = defaultdict(float), defaultdict(int), defaultdict(int)

    @contextmanager
    def __call__(self, name: str, flops: int = 0):
        start = self.clock()
        yield
        self.seconds[name] += self.clock() - start
        self.flops[name] += flops
        self.calls[name] += 1


def matmul_flops(a, b) -> int:
    """2 m k n for every matrix of the (broadcast) stack a @ b."""
    import numpy as np

    stack = math.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    return 2 * stack * a.shape[-2] * a.shape[-1] * b.shape[-1]


def traced_forward(encoder, ids, types, mask, t: OpTimer):
    """The library's forward (embed, block_forward with concat attention, the pooler), op by op."""
    import numpy as np

    from geron_lib.model.attention import merge_heads, split_heads
    from geron_lib.model.encoder import position_ids
    from geron_lib.model.layers import ACTIVATIONS, layer_norm, rows, softmax

    c, w = encoder.config, encoder.embeddings
    eps, act = c.layer_norm_eps, ACTIVATIONS[c.hidden_act][0]

    def linear(name, x, W, b):
        x2 = rows(x)
        with t(name, matmul_flops(x2, W)):
            y = (x2 @ W).reshape(*x.shape[:-1], -1)
        with t("bias adds"):
            y += b
        return y

    with t("embedding: gathers and sums"):
        positions = position_ids(ids, c)
        x = w["word"][ids] + w["position"][positions]
        x = x + w["token_type"][types]
    with t("layer norm (embeddings)"):
        x = layer_norm(x, w["ln_gain"], w["ln_bias"], eps)
    if "W_P" in w:
        x = linear("x W_P (E -> H)", x, w["W_P"], w["b_P"])
    for attention, ffn in encoder.layers:
        q = linear("x W_Q", x, attention["W_Q"], attention["b_Q"])
        k = linear("x W_K", x, attention["W_K"], attention["b_K"])
        v = linear("x W_V", x, attention["W_V"], attention["b_V"])
        with t("split heads (q, k, v)"):
            q, k, v = (split_heads(a, c.num_attention_heads) for a in (q, k, v))
        kT = k.swapaxes(-1, -2)
        with t("Q K^T", matmul_flops(q, kT)):
            scores = q @ kT
        with t("scale 1 / sqrt(d_head)"):
            scores /= math.sqrt(q.shape[-1])
        with t("mask add"):
            scores += mask
        with t("softmax"):
            A = softmax(scores)
        with t("A V", matmul_flops(A, v)):
            heads = A @ v
        with t("merge heads"):
            heads = merge_heads(heads)
        a = linear("heads W_O", heads, attention["W_O"], attention["b_O"])
        with t("residual adds"):
            s = x + a
        with t("layer norms (blocks)"):
            x = layer_norm(s, attention["ln_gain"], attention["ln_bias"], eps)
        u = linear("x W_1", x, ffn["W_1"], ffn["b_1"])
        with t(f"activation ({c.hidden_act})"):
            g = act(u)
        f = linear("act W_2", g, ffn["W_2"], ffn["b_2"])
        with t("residual adds"):
            s = x + f
        with t("layer norms (blocks)"):
            x = layer_norm(s, ffn["ln_gain"], ffn["ln_bias"], eps)
    p = encoder.pooler
    with t("pooler", matmul_flops(x[:, 0], p["W"])):
        return x, np.tanh(x[:, 0] @ p["W"] + p["b"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--preset", default="albert-base-v2")
    parser.add_argument("--cpu", action="store_true", help="CPU time of this process (with --threads 1)")
    args = parser.parse_args()
    if args.cpu and args.threads != 1:
        parser.error("--cpu measures one thread's work: pass --threads 1")
    clock = time.process_time if args.cpu else time.perf_counter
    set_threads(args.threads)
    import numpy as np

    from geron_lib.config import PRESETS
    from geron_lib.interop.torch_models import random_batch
    from geron_lib.model.attention import additive_mask
    from geron_lib.model.encoder import Encoder

    config = PRESETS[args.preset]
    if config.attention != "concat" or not config.type_vocab_size:
        raise SystemExit("this profile follows the concat form with token types (every published preset)")
    encoder = Encoder(config, dtype=np.float32, pooler=True)
    ids, types, keep = random_batch(config, B, T, seed=0)
    mask = additive_mask(keep, np.float32)
    a = np.random.default_rng(0).standard_normal((N_SGEMM, N_SGEMM), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((N_SGEMM, N_SGEMM), dtype=np.float32)

    def library():
        return encoder.forward(ids, token_type_ids=types, additive_mask=mask)[-1]

    hidden, _ = traced_forward(encoder, ids, types, mask, OpTimer(clock))  # warm-up
    if not np.array_equal(hidden, library()):
        raise SystemExit("the op-by-op forward no longer computes the library's forward: update it")
    per_op, whole, sgemm = defaultdict(list), [], []
    timer = OpTimer()
    for r in range(args.rounds):
        steps = ("ops", "library", "sgemm") if r % 2 == 0 else ("sgemm", "library", "ops")
        for step in steps:
            start = clock()
            if step == "ops":
                timer = OpTimer(clock)
                traced_forward(encoder, ids, types, mask, timer)
                for name, s in timer.seconds.items():
                    per_op[name].append(s)
            elif step == "library":
                library()
                whole.append(clock() - start)
            else:
                _ = a @ b
                sgemm.append(clock() - start)
    rate = 2 * N_SGEMM**3 / float(np.median(sgemm))  # FLOP/s
    med = {name: float(np.median(s)) for name, s in per_op.items()}
    total = sum(med.values())
    print(f"numpy {np.__version__}; threads {args.threads}; {args.preset}, float32, B = {B}, T = {T}, "
          f"padded rows; medians of {args.rounds} interleaved rounds ({'CPU' if args.cpu else 'wall-clock'} "
          "time)")
    print(f"numpy sgemm {N_SGEMM} x {N_SGEMM}: {rate / 1e9:.1f} GFLOP/s")
    print(f"{'op':<30}{'calls':>6}{'ms':>9}{'share':>8}{'GFLOP':>8}{'ms at sgemm':>13}{'x sgemm':>9}")
    for name in sorted(med, key=med.get, reverse=True):
        flops = timer.flops[name]
        ideal = f"{flops / rate * 1e3:>13.1f}{med[name] / (flops / rate):>9.2f}" if flops else ""
        gflop = f"{flops / 1e9:>8.2f}" if flops else f"{'':>8}"
        share = med[name] / total
        print(f"{name:<30}{timer.calls[name]:>6}{med[name] * 1e3:>9.1f}{share:>8.1%}{gflop}{ideal}")
    flops = sum(timer.flops.values())
    matmul = sum(med[n] for n in med if timer.flops[n])
    print(f"{'sum of the ops':<36}{total * 1e3:>9.1f}{'':>8}{flops / 1e9:>8.2f}{flops / rate * 1e3:>13.1f}"
          f"{total / (flops / rate):>9.2f}")
    print(f"matrix products {matmul * 1e3:.1f} ms ({matmul / total:.0%}), everything else "
          f"{(total - matmul) * 1e3:.1f} ms ({1 - matmul / total:.0%})")
    print(f"the library's forward in one piece: median {np.median(whole) * 1e3:.1f} ms "
          f"(range {min(whole) * 1e3:.1f} .. {max(whole) * 1e3:.1f})")


if __name__ == "__main__":
    main()
