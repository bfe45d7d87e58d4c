"""The JAX attention forms timed beside the numpy kernels (geron_lib.studies.jax_timing): the rows and the
refusals; no verdict here depends on the machine's speed. Needs the optional jax extra: under CI=true a skip
fails."""

import pytest

pytestmark = pytest.mark.jax


@pytest.fixture(scope="module")
def timing():
    pytest.importorskip("jax")
    from geron_lib.studies import jax_timing

    return jax_timing


def test_time_styles_rows(timing):
    rows = timing.time_styles("concat", [2], [1, 2], hidden_size=4, repeat=1)
    assert [(r["T"], r["h"]) for r in rows] == [(2, 1), (2, 2)]
    timed = ("numpy loop", "numpy batched", "jax loop", "jax vmap", "jax batched")
    for r in rows:
        assert set(r) == {"form", "T", "h", *timed, "loop / batched", "vmap / batched"}
        assert all(r[k] > 0 for k in timed)
        assert r["loop / batched"] == r["jax loop"] / r["jax batched"]


def test_time_styles_refuses_bad_requests(timing):
    with pytest.raises(ValueError, match="form must be one of"):
        timing.time_styles("fused", [4], [1], hidden_size=4)
    with pytest.raises(ValueError, match="at least one value"):
        timing.time_styles("sum", [4], [], hidden_size=4)
    with pytest.raises(ValueError, match="repeat must be at least 1"):
        timing.time_styles("sum", [4], [1], hidden_size=4, repeat=0)
