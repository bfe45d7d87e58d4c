"""scripts/assignments.py, loaded as a module for the tests of the assignments it makes."""

import importlib.util
import sys

import pytest
from book_site.pages import ROOT


@pytest.fixture(scope="session")
def assignments():
    spec = importlib.util.spec_from_file_location("assignments_script", ROOT / "scripts" / "assignments.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module
