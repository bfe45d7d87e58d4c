"""An encoder's weights as one flat dict of named arrays and back: what ``np.savez`` stores, so that a
pretrained encoder can be fine-tuned later, in another process."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..config import EncoderConfig
from ..costs.params import stored_copies
from ..validate import check_finite_array, check_type, plain_array
from .encoder import Encoder, weight_shapes


def encoder_arrays(encoder: Encoder) -> dict[str, np.ndarray]:
    """Every stored array: ``embeddings.<name>``, then ``attention.<j>.<name>`` and ``ffn.<j>.<name>`` for
    each stored copy j (one copy for a shared sublayer), then ``pooler.<name>`` if it has a pooler."""
    check_type("encoder", encoder, Encoder)
    out = {f"embeddings.{k}": v for k, v in encoder.embeddings.items()}
    seen = {"attention": [], "ffn": []}
    for sublayers in encoder.layers:
        for part, w in zip(("attention", "ffn"), sublayers, strict=True):
            if not any(w is other for other in seen[part]):
                out |= {f"{part}.{len(seen[part])}.{k}": v for k, v in w.items()}
                seen[part].append(w)
    if encoder.pooler is not None:
        out |= {f"pooler.{k}": v for k, v in encoder.pooler.items()}
    return out


def array_shapes(config: EncoderConfig, *, pooler: bool = False) -> dict[str, tuple[int, ...]]:
    """The shape of every array :func:`encoder_arrays` stores for an encoder of ``config``, by name."""
    shapes = weight_shapes(config)
    out = {f"embeddings.{k}": v for k, v in shapes["embeddings"].items()}
    for part, n in zip(("attention", "ffn"), stored_copies(config), strict=True):
        out |= {f"{part}.{j}.{k}": v for j in range(n) for k, v in shapes[part].items()}
    return out | ({f"pooler.{k}": v for k, v in shapes["pooler"].items()} if pooler else {})


def encoder_from_arrays(config: EncoderConfig, arrays) -> Encoder:
    """The encoder that :func:`encoder_arrays` stored (the arrays copied), laid out by ``config``'s
    sharing."""
    check_type("config", config, EncoderConfig)
    if not isinstance(arrays, Mapping):
        raise TypeError(f"arrays must be a mapping of names to arrays (what encoder_arrays returns, or "
                        f"np.load reads back), got {type(arrays).__name__}")
    arrays = {k: np.array(plain_array(f"arrays[{k!r}]", v)) for k, v in arrays.items()}
    if any(not isinstance(k, str) or a.dtype.kind != "f" for k, a in arrays.items()):
        raise TypeError("arrays must map names (strings) to float arrays")
    parts = {"embeddings": {}, "attention": {}, "ffn": {}, "pooler": {}}
    for name, value in arrays.items():
        part, _, rest = name.partition(".")
        if part not in parts:
            raise ValueError(f"arrays holds {name!r}: names start embeddings., attention., ffn. or pooler.")
        if part in ("embeddings", "pooler"):
            parts[part][rest] = value
        else:
            j, _, key = rest.partition(".")
            if not j.isdigit() or not key:
                raise ValueError(f"arrays holds {name!r}: a sublayer's names are {part}.<copy>.<name>")
            parts[part].setdefault(int(j), {})[key] = value
    if "word" not in parts["embeddings"]:
        raise ValueError("arrays holds no 'embeddings.word': not what encoder_arrays stores")
    for part, n in zip(("attention", "ffn"), stored_copies(config), strict=True):
        if sorted(parts[part]) != list(range(n)):
            raise ValueError(f"arrays holds {part} copies {sorted(parts[part])}, but config (sharing="
                             f"{config.sharing!r}, {config.num_hidden_layers} layers) stores copies 0 to "
                             f"{n - 1}")
    shapes = array_shapes(config, pooler=bool(parts["pooler"]))
    missing = sorted(shapes.keys() - arrays.keys())
    if missing:
        raise ValueError(f"arrays lacks {missing[:3]}, which an encoder of config stores")
    for name, value in arrays.items():
        if name not in shapes:
            raise ValueError(f"arrays holds {name!r}, which an encoder of config does not have")
        if value.shape != shapes[name]:
            raise ValueError(f"arrays[{name!r}] has shape {value.shape}, but config gives {shapes[name]}: "
                             "were these arrays stored from another config?")
    dtype = parts["embeddings"]["word"].dtype
    if any(a.dtype != dtype for a in arrays.values()):
        raise TypeError(f"arrays must all have one dtype, that of 'embeddings.word' ({dtype})")
    for name, value in arrays.items():
        check_finite_array(f"arrays[{name!r}]", value)
    copies = [[parts[p][j] for j in sorted(parts[p])] for p in ("attention", "ffn")]
    return Encoder.from_weights(config, parts["embeddings"], *copies, parts["pooler"] or None, dtype=dtype)
