"""What the rule tests read, built once per session (nothing is built when a module is imported), and the
limits every rule test runs within, as scripts/bad_input_sweep.py enforces them: its time limit and, by
tracemalloc, its memory limit."""

import importlib.util
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from bad_inputs import load_sweep
from bad_inputs.inputs import CFG, IDS, TEXT, WORDS, cfg
from bad_inputs.outcome import SWEPT, fixtures_of
from geron_lib.config import EncoderConfig
from geron_lib.costs.params import attention_params, count_parameters
from geron_lib.model.attention import random_attention_weights
from geron_lib.model.checkpoint import encoder_arrays
from geron_lib.model.classifier import SequenceClassifier
from geron_lib.model.encoder import Encoder
from geron_lib.model.mlm import MaskedLM
from geron_lib.notebook.exercises.attention import check_attention_params, check_loop_products
from geron_lib.notebook.exercises.embeddings import check_largest_saving_width, check_token_embedding_count
from geron_lib.notebook.exercises.hugging_face import check_unfactorised_albert, unfactorised_albert_count
from geron_lib.notebook.exercises.masking import check_distinct_masks, check_empty_mask_probability
from geron_lib.notebook.exercises.sharing import check_added_per_layer, check_shared_count
from geron_lib.notebook.exercises.torch_road import check_special_replacement_share
from geron_lib.notebook.exercises.tradeoffs import (
    check_rule_of_thumb_ratio,
    check_sharing_memory_saving,
    rule_of_thumb_ratio,
    sharing_memory_saving,
)
from geron_lib.pretraining.masking import MaskingSchedule, expected_distinct_masks
from geron_lib.pretraining.subword import WordPieceTokenizer
from geron_lib.pretraining.tokenizer import WordTokenizer

SWEEP = load_sweep()


def _is_rule_test(item) -> bool:
    return item.path.name.startswith("test_rules_")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _is_rule_test(item):  # before the tier's timeout (tests/conftest.py adds one only where none is)
            # the call alone, as the sweep times it (its fixtures are built before the child forks)
            item.add_marker(pytest.mark.timeout(SWEEP.TIME_LIMIT, func_only=True), append=False)


@pytest.fixture(autouse=True)
def fixtures_the_row_uses(request):
    """Every fixture a row's call names with ``uses``, set up before the test runs (the sweep sets it up in
    its own process, before the child forks)."""
    callspec = getattr(request.node, "callspec", None)
    for name in fixtures_of(list(callspec.params.values()) if callspec else []):
        request.getfixturevalue(name)


@pytest.fixture(autouse=True)
def within_the_memory_limit(request, fixtures_the_row_uses):
    """A rule test may allocate at most the sweep's memory limit (which the sweep measures itself)."""
    if not _is_rule_test(request.node) or request.config.stash.get(SWEPT, False):
        yield
        return
    tracemalloc.start()
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    limit = SWEEP.MEMORY_LIMIT_MIB
    assert peak <= limit * 2**20, f"huge allocation: a peak of {peak / 2**20:.1f} MiB, above {limit} MiB"


# The model's entries ----------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def encoder():
    return Encoder(CFG, seed=0)


@pytest.fixture(scope="session")
def pooled_encoder():
    return Encoder(CFG, seed=0, pooler=True)


@pytest.fixture(scope="session")
def mlm():
    return MaskedLM(CFG, seed=0)


@pytest.fixture(scope="session")
def classifier():
    """Three classes on a fresh encoder."""
    return SequenceClassifier(Encoder(CFG), 3)


@pytest.fixture(scope="session")
def forward_cache(encoder):
    """(hidden states, cache) of the encoder's forward_cached on IDS, and zeroed gradients of its weights."""
    hidden, cache = encoder.forward_cached(IDS)
    return hidden, cache, {k: np.zeros_like(v) for k, v in encoder.parameters().items()}


@pytest.fixture(scope="session")
def arrays(encoder):
    """The encoder's weights as checkpoint arrays."""
    return encoder_arrays(encoder)


@pytest.fixture(scope="session")
def w_sum():
    return random_attention_weights(8, 2, "sum", seed=0)


@pytest.fixture(scope="session")
def w_cat():
    return random_attention_weights(8, 2, "concat", seed=0)


# The data's entries -----------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def tok():
    """The word tokenizer of WORDS (ids 5 to 9; 0 to 4 are [PAD], [CLS], [SEP], [MASK], [UNK])."""
    return WordTokenizer(WORDS)


@pytest.fixture(scope="session")
def word_ids(tok):
    """TEXT as one row of 9 ids."""
    return tok.encode_batch([TEXT], 9)


@pytest.fixture(scope="session")
def wordpiece():
    return WordPieceTokenizer.from_texts([TEXT], vocab_size=40)


@pytest.fixture(scope="session")
def schedule(tok):
    """A static schedule on two rows of 8 ids."""
    return MaskingSchedule(tok.encode_batch([TEXT, "the mat sat"], 8), tok, "static")


@pytest.fixture(scope="session")
def word_mlm(tok):
    """A MaskedLM of the small config over the word tokenizer's vocabulary."""
    return MaskedLM(cfg(vocab_size=tok.vocab_size), seed=0)


@pytest.fixture(scope="session")
def two_class_classifier():
    return SequenceClassifier.from_encoder(Encoder(CFG), 2)



# The exercise checkers --------------------------------------------------------------------------------------
def _program_texts():
    """tests/notebook/program_texts.py (hand-made compiled programs), loaded by path: tests/notebook is no
    package, and the name ``notebook`` is Jupyter's."""
    path = Path(__file__).resolve().parents[1] / "notebook" / "program_texts.py"
    spec = importlib.util.spec_from_file_location("program_texts", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def numeric_checkers() -> dict:
    """{name: (checker, the arguments after the answer, the right answer computed here by the library)} for
    every checker whose answer is a number; the compiler exercise on hand-made programs at h = 8 (the loop
    keeps 41 products, the batched form 6)."""
    programs = _program_texts().programs({("concat", "loop", 8, 16): 41, ("concat", "vmap", 8, 16): 6,
                                          ("concat", "batched", 8, 16): 6})
    large = EncoderConfig.preset("albert-large-v2").replace(sharing="attention")
    return {
        "check_largest_saving_width": (check_largest_saving_width, (50265, 768), 756),
        "check_token_embedding_count": (check_token_embedding_count, (30000, 4096, 128),
                                        30000 * 128 + 128 * 4096 + 4096),
        "check_shared_count": (check_shared_count, ("albert-large-v2", "attention"),
                               count_parameters(large).total),
        "check_added_per_layer": (check_added_per_layer, ("albert-base-v2", "ffn"),
                                  4 * (768 * 768 + 768) + 2 * 768),
        "check_attention_params": (check_attention_params, (512, 8, "sum"), attention_params(512, 8, "sum")),
        "check_loop_products": (check_loop_products, (programs, 8), 41),
        "check_empty_mask_probability": (check_empty_mask_probability, (), 0.85**8),
        "check_distinct_masks": (check_distinct_masks, (10, 0.15, 40, "duplicated"),
                                 expected_distinct_masks(10, 0.15, 40, "duplicated", 10)),
        "check_sharing_memory_saving": (check_sharing_memory_saving, (256,),
                                        sharing_memory_saving("albert-base-v2", 256, 128)),
        "check_rule_of_thumb_ratio": (check_rule_of_thumb_ratio, ("albert-xlarge-v2", 512),
                                      rule_of_thumb_ratio("albert-xlarge-v2", 512)),
        "check_unfactorised_albert": (check_unfactorised_albert, (), unfactorised_albert_count()),
        "check_special_replacement_share": (check_special_replacement_share, (), 0.1 * 4 / 172),
    }


@pytest.fixture(scope="session")
def torch_hf():
    """(torch, transformers), once both are importable (its name marks the tests that use it hf)."""
    return pytest.importorskip("torch"), pytest.importorskip("transformers")


@pytest.fixture(scope="session")
def concat_weights():
    """The conversion exercise's concat-form weights: H 16, h 4."""
    return random_attention_weights(16, 4, "concat", seed=1)
