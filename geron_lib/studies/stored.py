"""The stored results of the longer runs: JSON files under ``data/``, shipped with the library, each written
by a script under ``scripts/``. :func:`load` is the one reader of them; every study's ``load_stored`` calls
it with its own file and the script that writes it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..validate import check_type

#: Where the library ships the stored results (the package data of ``geron_lib.studies``).
DATA = Path(__file__).parent / "data"


def load(path, script: str) -> dict:
    """The results stored as one JSON object at ``path`` (a str or os.PathLike), which ``script`` writes.

    A missing file raises FileNotFoundError, and a file that is not a JSON object ValueError, each naming
    the file and the script that writes it.
    """
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be a file path (str or pathlib.Path), got {type(path).__name__}")
    check_type("script", script, str)
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no stored results at {path}: {script} writes them")
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not valid JSON ({error}): run {script} again to rewrite it") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path} must hold a JSON object (results by name), not a {type(value).__name__}: "
                         f"{script} writes one")
    return value
