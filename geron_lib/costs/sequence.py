"""The sequence a cost estimate is of: its tokens and predicted positions, checked once for every estimate."""

from __future__ import annotations

from ..config import EncoderConfig, max_length
from ..validate import check_int, check_type


def check_estimate_sequence(config: EncoderConfig, seq_len: int,
                            masked: int | None = None) -> tuple[int, int]:
    """(T, n) = (seq_len, masked or T): the tokens, and the positions predicted in each sequence.

    Checks ``config``, that its position table covers T tokens and that 1 <= n <= T; shared by the cost
    estimates (:mod:`~geron_lib.costs.flops`' and :mod:`~geron_lib.costs.training_memory`'s).
    """
    check_type("config", config, EncoderConfig)
    T = check_int("seq_len", seq_len, minimum=1)
    if T > max_length(config):
        raise ValueError(f"seq_len ({T}) must be at most {max_length(config)}, the positions this config's "
                         f"max_position_embeddings ({config.max_position_embeddings}) covers")
    if masked is None:
        return T, T
    n = check_int("masked", masked, minimum=1)  # a Python int: numpy's would overflow the counts
    if n > T:
        raise ValueError(f"masked ({n}) must be at most seq_len ({T})")
    return T, n
