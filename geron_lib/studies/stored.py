"""The stored results of the longer runs: JSON files under ``data/``, shipped with the library, each written
by a script under ``scripts/``. :func:`load` is the one reader of them; every study's ``load_stored`` calls
it with its own file and the script that writes it. :func:`load_arrays` and :func:`load_lines` read the
shipped weights (an ``.npz`` archive) and text (one item a line) the same way: a file that cannot be read
is refused naming it."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np

from ..validate import check_type

#: Where the library ships the stored results (the package data of ``geron_lib.studies``).
DATA = Path(__file__).parent / "data"


def _file(path, script: str, what: str = "results") -> Path:
    """``path`` (a str or os.PathLike) as a Path to an existing file of stored ``what``, which ``script``
    writes."""
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be a file path (str or pathlib.Path), got {type(path).__name__}")
    check_type("script", script, str)
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no stored {what} at {path}: {script} writes them")
    return path


def load(path, script: str) -> dict:
    """The results stored as one JSON object at ``path`` (a str or os.PathLike), which ``script`` writes.

    A missing file raises FileNotFoundError, and a file that is not a JSON object ValueError, each naming
    the file and the script that writes it.
    """
    path = _file(path, script)
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not valid JSON ({error}): run {script} again to rewrite it") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path} must hold a JSON object (results by name), not a {type(value).__name__}: "
                         f"{script} writes one")
    return value


def load_arrays(path, script: str) -> dict[str, np.ndarray]:
    """The arrays stored by name in the ``.npz`` archive at ``path`` (what ``np.savez`` writes), which
    ``script`` writes. A missing file raises FileNotFoundError; an empty, truncated or corrupt one, one of
    another format or holding pickled objects, ValueError; each naming the file."""
    path = _file(path, script, "arrays")
    try:
        archive = np.load(path, allow_pickle=False)
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise ValueError("one array (.npy), not an archive of named arrays")
        with archive:
            return dict(archive)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as error:
        reason = str(error) or type(error).__name__
        if isinstance(error, ValueError) and "pickle" in reason:
            reason = "neither .npz nor .npy: numpy would read it as pickled objects, and refuses to"
        raise ValueError(f"{path} is not a readable .npz archive of arrays ({reason}): run {script} again "
                         "to rewrite it") from None


def load_lines(path, script: str) -> list[str]:
    """The lines of the UTF-8 text file at ``path``, which ``script`` writes. A missing file raises
    FileNotFoundError, one that is not UTF-8 text ValueError naming the file and the byte."""
    path = _file(path, script, "text")
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not UTF-8 text: byte {error.start} is {error.object[error.start]:#04x} "
                         f"({error.reason}); run {script} again to rewrite it") from None
