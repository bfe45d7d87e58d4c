"""Differences that are rounding noise, shown as a bound: their digits depend on the CPU's BLAS kernels and
thread count, so a page (and strict nbval) shows the bound, which holds on every machine."""

#: Below this, a difference between two float64 computations of one quantity is rounding noise here:
#: the chapters' differences are about 1e-16 to 1e-14 of values of order one.
ROUNDING = 1e-12


def rounding_noise(gap: float, bound: float = ROUNDING) -> str:
    """``gap`` as a page shows it: "below 1e-12" while it is rounding noise, else its value (1.2e-03)."""
    return f"below {bound:.0e}" if abs(gap) < bound else f"{gap:.1e}"
