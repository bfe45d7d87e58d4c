"""The small MaskedLMs and batches the interop tests share: four configs (BERT, ALBERT factorised and shared,
ALBERT factorised unshared, RoBERTa; three activations), seeded random weights, nothing downloaded."""

import numpy as np

from geron_lib import EncoderConfig
from geron_lib.interop.hf_config import config_from_hf
from geron_lib.model.mlm import MaskedLM
from geron_lib.pretraining.masking import bert_mask
from geron_lib.pretraining.tokenizer import WordTokenizer

TOK = WordTokenizer([f"w{i}" for i in range(40)])
SMALL = dict(vocab_size=TOK.vocab_size, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
             intermediate_size=24, max_position_embeddings=20, initializer_range=0.3, layer_norm_eps=1e-5)
#: BERT, ALBERT factorised and shared (one group), ALBERT factorised unshared, RoBERTa; three activations.
CONFIGS = {
    "bert": dict(model_type="bert", pad_token_id=0, hidden_act="relu", type_vocab_size=2),
    "albert-shared": dict(model_type="albert", embedding_size=8, num_hidden_groups=1, hidden_act="gelu_new"),
    "albert-unshared": dict(model_type="albert", embedding_size=8, num_hidden_groups=3, hidden_act="gelu"),
    "roberta": dict(model_type="roberta", pad_token_id=0, hidden_act="gelu", type_vocab_size=1),
}


def config(name: str) -> EncoderConfig:
    return config_from_hf(SMALL | CONFIGS[name])


def masked_lm(name: str, seed: int = 3) -> MaskedLM:
    """A float64 MaskedLM whose biases and layer-norm vectors are moved off 0 and 1 (a check with those values
    could not tell a gain from a bias)."""
    model = MaskedLM(config(name), seed=seed)
    rng = np.random.default_rng(seed + 100)
    for p in model.parameters().values():
        if p.ndim == 1:
            p += rng.normal(0, 0.2, p.shape)
    return model


def batch(seed: int = 1, mask_prob: float = 0.3):
    """Six sentences of 3 to 10 words, padded to 12 positions, masked once."""
    rng = np.random.default_rng(seed)
    texts = [" ".join(f"w{i}" for i in rng.integers(0, 40, rng.integers(3, 11))) for _ in range(6)]
    return bert_mask(TOK.encode_batch(texts, 12), TOK, mask_prob=mask_prob, rng=seed)
