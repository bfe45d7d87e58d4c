"""The budget explorer: its numbers are the library's counts, the twin is BERT-style, and its scrubber flips
between different pictures."""

import numpy as np
import pytest
from figure_checks import scrubber_frames

from geron_lib import count_parameters
from geron_lib.costs.flops import approximate_flops_per_token, flops_per_token
from geron_lib.costs.training_memory import training_memory
from geron_lib.notebook.widgets.budget import (
    BATCH,
    MASKED,
    ROWS,
    SEQ_LEN,
    budget_config,
    budget_explorer,
    budget_numbers,
)


@pytest.fixture(scope="module")
def explorer():
    return budget_explorer()


def test_numbers_are_the_library_counts():
    d = budget_numbers(128, "all", 12, 768)
    config = budget_config(128, "all", 12, 768)
    assert (config.E, config.hidden_size, config.num_hidden_layers, config.num_attention_heads,
            config.intermediate_size, config.vocab_size, config.sharing) == (128, 768, 12, 12, 3072, 30000,
                                                                             "all")
    memory = training_memory(config, BATCH, SEQ_LEN, dtype=np.float32, masked=MASKED)
    assert d["model"]["parameters"] == count_parameters(config, mlm_head=True).total
    assert d["model"]["parameter_bytes"] == memory.parameters == 16 * d["model"]["parameters"]
    assert d["model"]["activations"] == memory.activations + memory.workspace
    assert d["model"]["flops"] == flops_per_token(config, SEQ_LEN, mlm_head=True, masked=MASKED,
                                                  training=True)
    assert d["model"]["rule_of_thumb"] == approximate_flops_per_token(config, SEQ_LEN, training=True)
    # the twin: same L and H, E = H, nothing shared
    twin = budget_config(768, "none", 12, 768)
    assert d["twin"]["parameters"] == count_parameters(twin, mlm_head=True).total
    assert not twin.has_embedding_projection


def test_sharing_moves_the_parameter_rows_and_not_the_compute():
    shared = budget_numbers(1024, "all", 24, 1024)
    unshared = budget_numbers(1024, "none", 24, 1024)
    assert unshared["model"] == unshared["twin"]  # E = H, not shared: the model is its own twin
    assert shared["model"]["activations"] == unshared["model"]["activations"]
    assert shared["model"]["flops"] == unshared["model"]["flops"]
    assert shared["model"]["parameters"] < unshared["model"]["parameters"] / 5
    assert shared["model"]["rule_of_thumb"] < unshared["model"]["rule_of_thumb"] / 5  # the rule follows N


def test_E_above_H_is_H():
    assert budget_numbers(4096, "none", 12, 768)["E"] == 768
    assert budget_numbers(4096, "none", 12, 768)["model"] == budget_numbers(768, "none", 12, 768)["model"]


def test_the_picture_shows_its_numbers(explorer):
    d = explorer.set(E=64, sharing="attention", L=24, H=1024)
    (left,) = explorer.fig.axes
    widths = [bar.get_width() for bar in left.patches]
    assert widths == pytest.approx([d["model"][key] / d["twin"][key] for key, _ in ROWS])
    assert left.texts[0].get_text().endswith(f"{d['twin']['parameters'] / 1e6:,.1f}M")


def test_scrubber_frames_differ(explorer):
    explorer.set(E=128, sharing="all", L=12, H=768)
    page = explorer.scrubber("t", E=[128, 768], sharing=["none", "all"]).data
    frames = scrubber_frames(page)
    assert len(frames) == 4
    assert all(not np.array_equal(a, b) for i, a in enumerate(frames) for b in frames[i + 1:])


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(E=100), ValueError, "E must be one of"),
    (dict(L=3), ValueError, "L must be one of"),
    (dict(H=700), ValueError, "H must be one of"),
    (dict(sharing="half"), ValueError, "sharing must be one of"),
    (dict(E="big"), TypeError, "E must be an integer"),
])
def test_refuses_bad_settings(kwargs, error, match):
    with pytest.raises(error, match=match):
        budget_explorer(**kwargs)
