"""The plain inputs the rule tests vary: a small config, token ids with their masks, arrays. What the library
builds from them (models, tokenizers, weights) comes from the fixtures of conftest.py."""

import numpy as np

from geron_lib.config import EncoderConfig

NAN, INF = float("nan"), float("inf")

#: A small encoder's fields: V 20, H 8, L 2, h 2, F 16, 16 positions
TINY = dict(vocab_size=20, hidden_size=8, num_hidden_layers=2, num_attention_heads=2, intermediate_size=16,
            max_position_embeddings=16)
CFG = EncoderConfig(**TINY)
#: ALBERT xxlarge's sizes, unshared: counted, never built
BIG = dict(vocab_size=30000, hidden_size=4096, num_hidden_layers=12, num_attention_heads=64,
           intermediate_size=16384, max_position_embeddings=512)

IDS = np.array([[2, 5, 6, 7, 3], [2, 8, 9, 3, 0]])
KEEP = (IDS != 0).astype(np.int64)
DECISION = np.array([[0, 1, 0, 1, 0], [0, 0, 1, 0, 0]])  # three positions selected, none of them special
#: (B, T, H) = (2, 5, 8) hidden states
X = np.random.default_rng(0).normal(size=(2, 5, 8))

#: The exercise checkers whose answer is a number (conftest.py's numeric_checkers gives their arguments and
#: their right answers)
NUMERIC_CHECKERS = ("check_largest_saving_width", "check_token_embedding_count", "check_shared_count",
                    "check_added_per_layer", "check_attention_params", "check_loop_products",
                    "check_empty_mask_probability", "check_distinct_masks", "check_sharing_memory_saving",
                    "check_rule_of_thumb_ratio", "check_unfactorised_albert",
                    "check_special_replacement_share")

#: The words of the small word tokenizer (ids 5 to 9), and texts of them
WORDS = ["the", "cat", "sat", "on", "mat"]
TEXT = "the cat sat on the mat"


def cfg(**changes) -> EncoderConfig:
    """The small config with ``changes``."""
    return EncoderConfig(**TINY | changes)


def with_value(w: dict, key: str, value) -> dict:
    """A copy of the arrays ``w`` with the first entry of ``w[key]`` set to ``value``."""
    return edited(w, {key: value})


def edited(arrays: dict, edits: dict) -> dict:
    """A copy of the named ``arrays`` with ``edits``: a name to None is removed, to an array (or a list) is
    replaced, to a number has its first entry set to it; a name not there is added."""
    out = {k: v.copy() for k, v in arrays.items()}
    for name, value in edits.items():
        if value is None:
            del out[name]
        elif name in out and np.isscalar(value) and not isinstance(value, str):
            out[name].flat[0] = value
        else:
            out[name] = value
    return out
