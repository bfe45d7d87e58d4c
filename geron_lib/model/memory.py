"""How much memory a forward pass needs: the one estimate every public entry checks against
:data:`geron_lib.validate.MEMORY_LIMIT_BYTES` before it allocates anything."""

from __future__ import annotations


def forward_activation_bytes(batch: int, length: int, hidden_size: int, num_attention_heads: int,
                             intermediate_size: int, attention: str, itemsize: int) -> int:
    """bytes <= itemsize B (3 h T^2 + 6 T W + 8 T H),  W = max(F, h H for the summed form, H).

    A generous bound on what one forward pass holds at once: three (B, h, T, T) score-sized arrays,
    six of the widest (B, T, W) intermediates and eight (B, T, H) hidden-state-sized ones.
    """
    B, T, H, h = batch, length, hidden_size, num_attention_heads
    widest = max(intermediate_size, h * H if attention == "sum" else H)
    return itemsize * B * (3 * h * T * T + 6 * T * widest + 8 * T * H)
