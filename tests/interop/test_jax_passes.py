"""Which optimisation passes XLA's CPU backend runs on the attention forms: read from XLA's own log of
every pass it runs (chapter 3's answer to whether XLA:CPU merges the per-head products)."""

import pytest

pytestmark = pytest.mark.jax


@pytest.fixture(scope="module")
def jax_programs():
    pytest.importorskip("jax")
    from geron_lib.interop import jax_programs

    return jax_programs


@pytest.mark.parametrize("style", ["loop", "vmap"])
def test_the_cpu_pipeline_runs_no_dot_merger(jax_programs, style):
    passes = jax_programs.optimisation_passes("concat", style, num_attention_heads=4, seq_len=16)
    # the log is read: passes of XLA:CPU's pipeline that rewrite dots are in it
    assert {"algsimp", "dot_decomposer", "transpose-folding", "batch-dot-simplification"} <= set(passes)
    # DotMerger, the pass that would merge dots sharing an operand, is named "dot-merger" in XLA's sources
    assert "dot-merger" not in passes
    assert not [name for name in passes if "merg" in name]


def test_bad_input_is_refused(jax_programs):
    with pytest.raises(ValueError, match="style must be one of"):
        jax_programs.optimisation_passes("concat", "unrolled")
    with pytest.raises(ValueError, match="divisible by num_attention_heads"):
        jax_programs.optimisation_passes("concat", "loop", num_attention_heads=3)
