"""The stored results of the longer runs ship with geron_lib.studies, so that any install can read them."""

import tomllib
from pathlib import Path

import pytest

from geron_lib.studies import context_grid, dynamic_masking, hf_gap, stored

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("module", [context_grid, dynamic_masking, hf_gap])
def test_stored_results_are_package_data(module):
    # a wheel (a non-editable install, Colab's pip install) holds only the package data pyproject.toml lists
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]["geron_lib.studies"]
    inside = module.STORED.relative_to(stored.DATA.parent)  # the package geron_lib.studies
    assert any(inside.match(pattern) for pattern in package_data), (inside, package_data)
    assert module.STORED.is_file() and module.load_stored()  # read without a path
