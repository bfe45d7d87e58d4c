"""Chapter 2's note: the library's block is post-LN, as BERT's and transformers' ALBERT are (the
interop tests match transformers' outputs; this test needs no transformers): each sublayer's residual sum
goes through a layer norm, so every layer's output, with the initial gains 1 and biases 0, has mean 0 and
variance 1 at every position. A pre-LN block, x + F(LN(x)), leaves the residual stream unnormalised."""

import numpy as np

from geron_lib import PRESETS, Encoder


def test_every_layers_output_is_layer_normed():
    config = PRESETS["tiny-albert"].replace(sharing="none")
    encoder = Encoder(config, seed=0)
    ids = np.random.default_rng(0).integers(5, config.vocab_size, (2, 9))
    states = encoder.hidden_states(ids)
    for x in states[1:]:
        np.testing.assert_allclose(x.mean(axis=-1), 0, atol=1e-10)
        np.testing.assert_allclose(x.var(axis=-1), 1, rtol=1e-3)  # the norm's epsilon, a little under 1

