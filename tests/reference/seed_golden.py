"""Read the printed R examples of the seed documents (reference/golden/*_example.txt) into Python."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

GOLDEN = Path(__file__).parent / "golden"
#: The reference's field names that geron_lib names for what they hold (geron_lib.reference.ReferenceResult).
RENAMED = {"estimate": "headline", "n": "n_tokens"}


def _values(line: str) -> list:
    """The values after an R row label such as ``[1]`` or ``[1,]``."""
    body = re.sub(r"^\s*\[\d+,?\]\s*", "", line)
    if body.startswith('"'):
        return [body.strip().strip('"')]
    return [v for v in (_scalar(t) for t in body.split()) if v is not None]


def _scalar(token: str):
    booleans = {"TRUE": True, "FALSE": False}
    return booleans[token] if token in booleans else float(token)


def read_example(name: str) -> dict:
    """Fields of the printed list, named as geron_lib names them (:data:`RENAMED`): ``hidden`` as a
    (1, T, d) array, lists for vectors, masks as lists."""
    fields: dict = {}
    slices: dict[int, list[float]] = {}
    key = None
    for line in (GOLDEN / f"{name}_example.txt").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith("$"):
            key = RENAMED.get(line[1:].strip(), line[1:].strip())
            continue
        if m := re.match(r", , (\d+)", line):
            current = slices.setdefault(int(m.group(1)), [])
            continue
        if re.match(r"\s*\[,\d+\]", line):  # column header of a matrix slice
            continue
        if key == "hidden":
            current.extend(_values(line))
        else:
            fields.setdefault(key, []).extend(_values(line))
    # slice k holds feature k-1 of every position: hidden[0, t, k-1]
    fields["hidden"] = np.array([slices[k] for k in sorted(slices)]).T[None]
    mask_keys = sorted(k for k in fields if k.startswith("masks[["))
    if mask_keys:
        fields["masks"] = [[int(v) for v in fields.pop(k)] for k in mask_keys]
    return fields
