"""Encoder checkpoints: encoder_arrays -> np.savez -> np.load -> encoder_from_arrays gives the same encoder,
for every sharing mode."""

import numpy as np
import pytest

from geron_lib import EncoderConfig, count_parameters
from geron_lib.model.checkpoint import encoder_arrays, encoder_from_arrays
from geron_lib.model.encoder import Encoder

L = 3
IDS = np.array([[1, 5, 6, 2, 7, 2], [1, 8, 9, 2, 0, 0]])
TYPES = np.array([[0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0]])
MASK = (IDS != 0).astype(np.int64)
#: (attention copies, FFN copies) stored by each sharing mode with L layers, counted by hand
COPIES = {"none": (L, L), "all": (1, 1), "ffn": (L, 1), "attention": (1, L)}


def tiny_config(**kw) -> EncoderConfig:
    fields = dict(vocab_size=12, hidden_size=8, num_hidden_layers=L, num_attention_heads=2,
                  intermediate_size=16, max_position_embeddings=8, type_vocab_size=2, embedding_size=4)
    return EncoderConfig(**(fields | kw))


def moved(encoder: Encoder, seed: int) -> Encoder:
    """Every weight off its initial value, so that a gain loaded as a bias (or one copy as another) shows."""
    rng = np.random.default_rng(seed)
    for p in encoder.parameters().values():
        p += rng.normal(0, 0.3, p.shape)
    return encoder


@pytest.mark.parametrize("sharing", ["none", "all", "ffn", "attention"])
def test_round_trip_through_npz(tmp_path, sharing):
    config = tiny_config(sharing=sharing)
    encoder = moved(Encoder(config, seed=1), seed=2)
    arrays = encoder_arrays(encoder)
    for part, n in zip(("attention", "ffn"), COPIES[sharing], strict=True):
        stored = {name.split(".")[1] for name in arrays if name.startswith(f"{part}.")}
        assert stored == {str(j) for j in range(n)}, part
    path = tmp_path / "encoder.npz"
    np.savez(path, **arrays)
    with np.load(path) as stored:
        loaded = encoder_from_arrays(config, stored)
    assert loaded.dtype == encoder.dtype
    assert loaded.num_parameters() == encoder.num_parameters() == count_parameters(config).total
    for got, want in zip(loaded.hidden_states(IDS, token_type_ids=TYPES, attention_mask=MASK),
                         encoder.hidden_states(IDS, token_type_ids=TYPES, attention_mask=MASK),
                         strict=True):
        np.testing.assert_array_equal(got, want)
    for i in range(1, L):
        for k, kind in enumerate(("attention", "ffn")):
            # layer i uses the same stored sublayer as layer 0 exactly when that kind is shared
            shared = COPIES[sharing][k] == 1
            assert (loaded.layers[i][k] is loaded.layers[0][k]) == shared, (i, kind)
    params = loaded.parameters()
    for name, p in encoder.parameters().items():
        assert not np.shares_memory(params[name], p)


def test_the_loaded_arrays_are_copies():
    encoder = moved(Encoder(tiny_config(sharing="all"), seed=3), seed=4)
    arrays = encoder_arrays(encoder)
    loaded = encoder_from_arrays(encoder.config, arrays)
    before = loaded(IDS)
    for a in arrays.values():
        a += 1.0  # the saved encoder trains on: the loaded one must not change
    np.testing.assert_array_equal(loaded(IDS), before)


def test_float32_and_the_pooler_survive():
    encoder = moved(Encoder(tiny_config(sharing="none"), seed=5, dtype=np.float32, pooler=True), seed=6)
    loaded = encoder_from_arrays(encoder.config, encoder_arrays(encoder))
    assert loaded.dtype == np.float32 and loaded.num_parameters() == encoder.num_parameters()
    np.testing.assert_array_equal(loaded.pool(loaded(IDS)), encoder.pool(encoder(IDS)))


def test_bad_arrays_are_refused():
    config = tiny_config(sharing="all")
    arrays = encoder_arrays(Encoder(config))
    with pytest.raises(ValueError, match=r"arrays holds 'layers\.0\.W_Q': names start embeddings\."):
        encoder_from_arrays(config, arrays | {"layers.0.W_Q": np.zeros((8, 8))})
    with pytest.raises(ValueError, match=r"arrays holds 'attention\.W_Q': a sublayer's names are attention"):
        encoder_from_arrays(config, arrays | {"attention.W_Q": np.zeros((8, 8))})
    with pytest.raises(ValueError, match="arrays holds no 'embeddings.word'"):
        encoder_from_arrays(config, {k: v for k, v in arrays.items() if k != "embeddings.word"})
    # arrays of a shared encoder read as an unshared one (and back) would silently reuse or drop copies
    with pytest.raises(ValueError, match=r"arrays holds attention copies \[0\], but config \(sharing='none'"):
        encoder_from_arrays(config.replace(sharing="none"), arrays)
    unshared = encoder_arrays(Encoder(config.replace(sharing="none")))
    with pytest.raises(ValueError, match=r"copies \[0, 1, 2\], but config \(sharing='all', 3 layers\)"):
        encoder_from_arrays(config, unshared)
    with pytest.raises(TypeError, match="config must be an EncoderConfig"):
        encoder_from_arrays("tiny", arrays)
    with pytest.raises(TypeError, match="encoder must be an Encoder"):
        encoder_arrays(config)
