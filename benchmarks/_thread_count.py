"""The thread count every benchmark here gives both libraries: set before numpy or torch is imported, so
this module imports neither."""

import os


def set_threads(n: int) -> None:
    """Before numpy or torch is imported: one thread count for every pool either library may use."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)
