"""How much memory one encoder block needs: what its forward pass caches for the backward pass, by part, and
the temporaries of its forward and backward passes, in elements. From these items come the one estimate of a
forward pass that every public entry checks against :data:`geron_lib.validate.MEMORY_LIMIT_BYTES` before it
allocates anything, and a training step's itemised bytes
(:func:`geron_lib.costs.training_memory.training_memory`).

The items are the arrays today's kernels put in their ``cache`` dicts (``block_forward``,
``attention_probs``, ``concat_attention`` / ``sum_attention``, ``layer_norm``, ``feed_forward``) and the
temporaries their code holds at once; when a kernel changes, its item here changes with it
(``tests/costs/test_memory.py`` compares the items with the arrays a real cache holds, and the whole with
tracemalloc). This module imports only the config's names and validate: the kernels' own modules call it,
from the layer above.
"""

from __future__ import annotations

from ..config import ATTENTION
from ..validate import check_choice, check_int

#: Arrays of (B, T, F) that the derivative of each activation holds at once, its result included, as
#: written in geron_lib.model.layers (numpy may reuse some large temporaries in place).
ACTIVATION_GRAD_TEMPORARIES = {"gelu": 3, "gelu_new": 5, "relu": 2}


def _sizes(**sizes) -> list[int]:
    """The sizes as Python ints, each at least 1 (numpy's would overflow the products), in the order given."""
    return [check_int(name, value, minimum=1) for name, value in sizes.items()]


def block_cache_elements(batch: int, seq_len: int, hidden_size: int, num_attention_heads: int,
                         intermediate_size: int, attention: str) -> dict[str, int]:
    """a_block = B [T H (3 + h_V + o) + h T^2 + 3 T H + 2 T + 2 T F],  h_V, o = 1, 1 (concat) or h, 0 (sum).

    The elements one ``block_forward`` keeps for its backward pass, by part:
    attention: the block's input x, q and k (T H each), v (T H; h T H summed: every head's values are H
    wide) and the merged heads (T H, concat only); attention_probs: A (h T^2); layer_norms: x_hat (T H) and
    std (T) of both layer norms, and the first one's output, the FFN's input (T H); ffn: u and act(u) (T F
    each). The block's output is the next block's input (the last block's is not kept).
    """
    B, T, H, h, F = _sizes(batch=batch, seq_len=seq_len, hidden_size=hidden_size,
                           num_attention_heads=num_attention_heads, intermediate_size=intermediate_size)
    values, merged = (h, 0) if check_choice("attention", attention, ATTENTION) == "sum" else (1, 1)
    return {"attention": B * T * H * (3 + values + merged), "attention_probs": B * h * T * T,
            "layer_norms": B * T * (3 * H + 2), "ffn": 2 * B * T * F}


def block_forward_workspace(batch: int, seq_len: int, num_attention_heads: int,
                            intermediate_size: int) -> int:
    """w_fwd = max(2 B h T^2, 3 B T F): the temporaries of a block's forward beyond what it caches.

    The softmax holds the scores and their shifted copy beside A; a GELU holds three (B, T, F) temporaries
    beside u.
    """
    B, T, h, F = _sizes(batch=batch, seq_len=seq_len, num_attention_heads=num_attention_heads,
                        intermediate_size=intermediate_size)
    return max(2 * B * h * T * T, 3 * B * T * F)


def forward_activation_bytes(batch: int, seq_len: int, hidden_size: int, num_attention_heads: int,
                             intermediate_size: int, attention: str, itemsize: int) -> int:
    """bytes <= itemsize (a_block + w_fwd): one block's cache and its forward temporaries.

    A forward pass without a cache holds one block's arrays at a time, each a subset of what that block
    would cache (:func:`block_cache_elements`), plus its temporaries (:func:`block_forward_workspace`); the
    embeddings (width E <= H) hold less. The bound every public entry checks before a forward pass.
    """
    cached = block_cache_elements(batch, seq_len, hidden_size, num_attention_heads, intermediate_size,
                                  attention)
    workspace = block_forward_workspace(batch, seq_len, num_attention_heads, intermediate_size)
    return check_int("itemsize", itemsize, minimum=1) * (sum(cached.values()) + workspace)


def block_backward_workspace(batch: int, seq_len: int, hidden_size: int, num_attention_heads: int,
                             intermediate_size: int, attention: str, hidden_act: str) -> int:
    """w_block = 3 B T H + max(attention', FFN'): a block's backward temporaries beyond its cache (elements).

    Every block's backward holds the gradient arriving from above, the d_hidden MaskedLM started from and its
    layer norm's backward output (3 B T H; the top block's arrival is d_hidden itself). On top, at the
    busiest moment of each sublayer (W = a weight gradient's product x^T dy, before it is added in):
    concat attention: dW_O's dX, dV and its dX (3 T H) beside dA and the softmax backward's two temporaries
    (3 h T^2), or beside dA, dS, dQ, dK and dW_K's dX, its input and its result (2 h T^2 + 5 T H, or 4 T H + W
    while W = H^2 exists); summed attention: dA, dV (h T H) and dW'_V's product (W = h H^2), dA, dV, its
    product with W'_V^T and dX (h T^2 + 2 h T H + T H), dA, dV, dX and the softmax backward's two
    temporaries (3 h T^2 + h T H + T H), or the query and key moment (2 h T^2 + h T H + T H + as concat);
    FFN: d act(u) with the temporaries of the activation's derivative (:data:`ACTIVATION_GRAD_TEMPORARIES`),
    or d act(u), du and dW_1's product (2 T F + H F).
    """
    B, T, H, h, F = _sizes(batch=batch, seq_len=seq_len, hidden_size=hidden_size,
                           num_attention_heads=num_attention_heads, intermediate_size=intermediate_size)
    check_choice("attention", attention, ATTENTION)
    check_choice("hidden_act", hidden_act, tuple(ACTIVATION_GRAD_TEMPORARIES))
    X, A = B * T * H, B * h * T * T  # elements of a hidden state and of the attention probabilities
    query_key = 2 * A + 4 * X + max(X, H * H)  # dA, dS, dQ, dK, dW_K's input and dX, then the sum or W_K's W
    if attention == "sum":
        attend = max(A + h * X + h * H * H, A + (2 * h + 1) * X, 3 * A + (h + 1) * X,
                     query_key + (h + 1) * X)
    else:
        attend = max(3 * A + 3 * X, query_key + 3 * X)
    U = B * T * F
    ffn = max((1 + ACTIVATION_GRAD_TEMPORARIES[hidden_act]) * U, 2 * U + H * F)
    return 3 * X + max(attend, ffn)
