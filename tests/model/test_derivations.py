"""Appendix A4's derivations, each written out in numpy from its formula (not from the library's code) and
checked against the library's backward function and against central finite differences, in float64: the
softmax Jacobian-vector product, the layer-norm backward, the attention backward and the cross-entropy
through the tied decoder."""

import math

import numpy as np
from attention_cases import attention_inputs

from geron_lib import EncoderConfig
from geron_lib.model.attention import (
    concat_attention,
    concat_attention_backward,
    random_attention_weights,
)
from geron_lib.model.gradcheck import numeric_gradient, relative_error
from geron_lib.model.layers import layer_norm, layer_norm_backward, softmax, softmax_backward
from geron_lib.model.mlm import MaskedLM, mlm_head
from geron_lib.pretraining.masking import bert_mask
from geron_lib.pretraining.tokenizer import WordTokenizer

TOLERANCE = 1e-7
RNG = np.random.default_rng(30)


def test_softmax_jvp_is_the_jacobian_transposed_times_the_upstream_gradient():
    # dS = A * (dA - rowsum(dA * A)): J = diag(a) - a a^T per row, symmetric, so J^T dA = a * dA - a (a . dA)
    S, dA = RNG.normal(size=(2, 3, 5)), RNG.normal(size=(2, 3, 5))
    A = softmax(S)
    derived = A * (dA - (dA * A).sum(axis=-1, keepdims=True))
    jacobians = np.einsum("...j,jk->...jk", A, np.eye(5)) - A[..., :, None] * A[..., None, :]
    assert np.allclose(np.einsum("...jk,...j->...k", jacobians, dA), derived, rtol=0, atol=1e-14)
    assert np.allclose(softmax_backward(dA, A), derived, rtol=0, atol=1e-14)
    numeric = numeric_gradient(lambda: float((dA * softmax(S)).sum()), S)
    assert relative_error(derived, numeric) < TOLERANCE


def test_layer_norm_backward_is_its_derivation():
    # x_hat = (x - mean x) / std; with g = dy * gain: dx = (g - mean(g) - x_hat mean(g x_hat)) / std,
    # d gain = sum over rows of dy x_hat, d bias = sum over rows of dy
    x, dy = RNG.normal(size=(2, 3, 6)), RNG.normal(size=(2, 3, 6))
    gain, bias = RNG.normal(size=6), RNG.normal(size=6)
    mu = x.mean(axis=-1, keepdims=True)
    std = np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-12)
    x_hat = (x - mu) / std
    g = dy * gain
    dx = (g - g.mean(axis=-1, keepdims=True) - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)) / std
    d_gain, d_bias = (dy * x_hat).sum(axis=(0, 1)), dy.sum(axis=(0, 1))
    cache, g_gain, g_bias = {}, np.zeros(6), np.zeros(6)
    layer_norm(x, gain, bias, cache=cache)
    assert np.allclose(layer_norm_backward(dy, cache, g_gain, g_bias), dx, rtol=0, atol=1e-12)
    assert np.allclose(g_gain, d_gain, rtol=0, atol=1e-12) and np.allclose(g_bias, d_bias, rtol=0, atol=1e-12)
    loss = lambda: float((dy * layer_norm(x, gain, bias)).sum())  # noqa: E731
    for derived, p in ((dx, x), (d_gain, gain), (d_bias, bias)):
        assert relative_error(derived, numeric_gradient(loss, p)) < TOLERANCE


def test_attention_backward_is_its_derivation_head_by_head():
    # Z_i = A_i U_i, U_i = X W_V,i + 1 b_V,i; Y = concat(Z_i) W_O + b_O. Backwards: dZ_i = (dY W_O^T)_i,
    # dA_i = dZ_i U_i^T, dU_i = A_i^T dZ_i, dS_i = softmax JVP of dA_i, dQ_i = dS_i K_i / sqrt(d_head),
    # dK_i = dS_i^T Q_i / sqrt(d_head), dX = dQ W_Q^T + dK W_K^T + dU W_V^T
    B, T, H, h = 2, 5, 12, 3
    d = H // h
    x, mask = attention_inputs(B, T, H, seed=4)
    w = random_attention_weights(H, h, seed=5)
    dy = RNG.normal(size=(B, T, H))
    Q, K, U = (x @ w[f"W_{n}"] + w[f"b_{n}"] for n in "QKV")
    dZ, dQ, dK, dU = dy @ w["W_O"].T, np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    for b in range(B):
        for i in range(h):
            cols = slice(i * d, (i + 1) * d)
            A = softmax(Q[b, :, cols] @ K[b, :, cols].T / math.sqrt(d) + mask[b, 0])
            dA = dZ[b, :, cols] @ U[b, :, cols].T
            dU[b, :, cols] = A.T @ dZ[b, :, cols]
            dS = A * (dA - (dA * A).sum(axis=-1, keepdims=True))
            dQ[b, :, cols] = dS @ K[b, :, cols] / math.sqrt(d)
            dK[b, :, cols] = dS.T @ Q[b, :, cols] / math.sqrt(d)
    dx = dQ @ w["W_Q"].T + dK @ w["W_K"].T + dU @ w["W_V"].T
    derived = {"W_Q": x.reshape(-1, H).T @ dQ.reshape(-1, H), "b_K": dK.sum(axis=(0, 1)),
               "W_V": x.reshape(-1, H).T @ dU.reshape(-1, H), "b_O": dy.sum(axis=(0, 1))}
    cache, g = {}, {k: np.zeros_like(v) for k, v in w.items()}
    concat_attention(x, w, h, mask, cache)
    assert np.allclose(concat_attention_backward(dy, cache, w, g), dx, rtol=0, atol=1e-12)
    assert np.abs(derived["b_K"]).max() < 1e-12  # a whole row's shift: the softmax ignores it
    for name, value in derived.items():
        assert np.allclose(g[name], value, rtol=0, atol=1e-12), name
    loss = lambda: float((dy * concat_attention(x, w, h, mask)).sum())  # noqa: E731
    assert relative_error(dx, numeric_gradient(loss, x)) < TOLERANCE
    assert relative_error(derived["W_Q"], numeric_gradient(loss, w["W_Q"])) < TOLERANCE


def test_the_tied_table_gets_the_lookups_gradient_plus_the_decoders():
    # z = hidden LN output (N, E), logits = z Emb^T + b_out, dlogits = (P - onehot(y)) / N:
    # the decoder's share is dlogits^T z; the lookup's is what reaches the rows the input used
    tok = WordTokenizer([f"w{i}" for i in range(9)])
    batch = bert_mask(tok.encode_batch(["w1 w2 w3 w4", "w5 w6 w0"], 6), tok, mask_prob=0.5, rng=3)
    config = EncoderConfig(vocab_size=tok.vocab_size, embedding_size=4, hidden_size=6, num_hidden_layers=1,
                           num_attention_heads=2, intermediate_size=8, max_position_embeddings=8,
                           initializer_range=0.5)
    model = MaskedLM(config, seed=1)
    table = model.encoder.embeddings["word"]
    decoder = table.copy()  # the same values, as a separate array: the two uses can then move apart
    c, targets = model.config, batch.labels[batch.selected]

    def loss(word_for_decoder):
        hidden, _ = model.encoder.forward_cached(batch.input_ids, attention_mask=batch.attention_mask)
        logits = mlm_head(hidden[batch.selected], model.head, word_for_decoder, c.hidden_act,
                          c.layer_norm_eps)
        logits = logits - logits.max(axis=-1, keepdims=True)
        log_p = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
        return float(-log_p[np.arange(len(targets)), targets].mean())

    hidden, _ = model.encoder.forward_cached(batch.input_ids, attention_mask=batch.attention_mask)
    head_cache = {}
    logits = mlm_head(hidden[batch.selected], model.head, table, c.hidden_act, c.layer_norm_eps, head_cache)
    P = np.exp(logits - logits.max(axis=-1, keepdims=True))
    P /= P.sum(axis=-1, keepdims=True)
    P[np.arange(len(targets)), targets] -= 1
    decoder_share = (P / len(targets)).T @ head_cache["z"]                      # (V, E)
    assert relative_error(decoder_share, numeric_gradient(lambda: loss(decoder), decoder)) < TOLERANCE
    lookup_share = numeric_gradient(lambda: loss(decoder), table)  # the table moves only in the lookup
    unused = np.setdiff1d(np.arange(tok.vocab_size), batch.input_ids)
    assert unused.size and np.abs(lookup_share[unused]).max() == 0  # rows no input used get no lookup share
    total = model.loss_and_grads(batch)[1]["embeddings.word"]
    assert relative_error(total, decoder_share + lookup_share) < TOLERANCE
    assert relative_error(total[unused], decoder_share[unused]) < TOLERANCE
