"""An encoder's weights as one flat dict of named arrays and back: what ``np.savez`` stores, so that a
pretrained encoder can be fine-tuned later, in another process."""

from __future__ import annotations

import numpy as np

from ..config import EncoderConfig
from ..validate import check_type
from .encoder import Encoder


def encoder_arrays(encoder: Encoder) -> dict[str, np.ndarray]:
    """Every stored array: ``embeddings.<name>``, then ``attention.<j>.<name>`` and ``ffn.<j>.<name>`` for
    each stored copy j (one copy for a shared sublayer)."""
    check_type("encoder", encoder, Encoder)
    out = {f"embeddings.{k}": v for k, v in encoder.embeddings.items()}
    seen = {"attention": [], "ffn": []}
    for sublayers in encoder.layers:
        for part, w in zip(("attention", "ffn"), sublayers, strict=True):
            if not any(w is other for other in seen[part]):
                out |= {f"{part}.{len(seen[part])}.{k}": v for k, v in w.items()}
                seen[part].append(w)
    return out


def encoder_from_arrays(config: EncoderConfig, arrays) -> Encoder:
    """The encoder that :func:`encoder_arrays` stored (the arrays copied), laid out by ``config``'s
    sharing."""
    check_type("config", config, EncoderConfig)
    arrays = {k: np.array(v) for k, v in dict(arrays).items()}
    parts = {"embeddings": {}, "attention": {}, "ffn": {}}
    for name, value in arrays.items():
        part, _, rest = name.partition(".")
        if part not in parts:
            raise ValueError(f"arrays holds {name!r}: names start embeddings., attention. or ffn.")
        if part == "embeddings":
            parts[part][rest] = value
        else:
            j, _, key = rest.partition(".")
            parts[part].setdefault(int(j), {})[key] = value
    dtype = parts["embeddings"]["word"].dtype
    copies = [[parts[p][j] for j in sorted(parts[p])] for p in ("attention", "ffn")]
    return Encoder.from_weights(config, parts["embeddings"], *copies, dtype=dtype)
