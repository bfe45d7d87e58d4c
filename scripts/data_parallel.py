"""Appendix A2's plain PyTorch loop, data-parallel: two processes on this CPU, started by torchrun.

Each process holds a whole copy of the appendix's model, reads its half of every global batch of
``train_mlm``'s run with seed 0 (geron_lib.studies.hf_gap.numpy_batches), and DistributedDataParallel averages
the two gradients over the gloo backend before every step (geron_lib.studies.hf_gap.data_parallel_run). Only
127.0.0.1 is used: the rendezvous and gloo's sockets are both on the loopback interface. Writes every step's
loss on the global batch and the final held-out loss to geron_lib/studies/data/data_parallel.json (or --out),
which the appendix reads (geron_lib.studies.hf_gap.DATA_PARALLEL) and compares with its own one-process loop
on the same batches.

Run from the repository root (under a minute on two cores of a quiet machine):
  .venv/bin/python scripts/data_parallel.py [--nproc 2] [--epochs N] [--out PATH]
It starts `python -m torch.distributed.run --nproc_per_node 2 ... scripts/data_parallel.py --worker ...`.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOOPBACK = "127.0.0.1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def _loopback_interface() -> str:
    """The name of the loopback interface ("lo" on Linux, "lo0" on macOS), for gloo's sockets."""
    names = [name for _, name in socket.if_nameindex()]
    return next((n for n in ("lo", "lo0") if n in names), "lo")


def launch(nproc: int, epochs: int | None, out: Path) -> None:
    """torchrun this script's worker on ``nproc`` processes, rendezvous and gloo on the loopback only."""
    command = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", str(nproc),
               "--master_addr", LOOPBACK, "--master_port", str(_free_port()), __file__, "--worker",
               "--out", str(out)] + (["--epochs", str(epochs)] if epochs else [])
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))  # this checkout's library
    env = os.environ | {"GLOO_SOCKET_IFNAME": _loopback_interface(), "OMP_NUM_THREADS": "1",
                        "PYTHONPATH": path}
    subprocess.run(command, check=True, env=env, cwd=ROOT)


def worker(epochs: int | None, out: Path) -> None:
    import torch
    import torch.distributed as dist

    from geron_lib.studies import dynamic_masking, hf_gap

    torch.set_num_threads(1)
    dist.init_process_group("gloo")  # from torchrun's environment: MASTER_ADDR=127.0.0.1, RANK, WORLD_SIZE
    try:
        result = hf_gap.data_parallel_run(dynamic_masking.Setup(), seed=0, epochs=epochs)
        if dist.get_rank() == 0:
            out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
            print(f"{result['processes']} processes, {len(result['train_loss'])} steps: final held-out loss "
                  f"{result['held_out_loss']:.4f}; wrote {out}", flush=True)
    finally:
        dist.destroy_process_group()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nproc", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--epochs", type=int, default=None, help="epochs (default: the appendix's)")
    parser.add_argument("--out", type=Path, default=None, help="where to write the JSON")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.out is None:
        from geron_lib.studies import hf_gap

        args.out = hf_gap.DATA_PARALLEL
    if args.worker:
        worker(args.epochs, args.out)
    else:
        launch(args.nproc, args.epochs, args.out.resolve())


if __name__ == "__main__":
    main()
