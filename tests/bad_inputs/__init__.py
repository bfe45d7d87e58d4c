"""Bad and unusual inputs at the public entries: the cases (``cases_*.py``) and their tests."""

import importlib.util
import sys
from pathlib import Path

SWEEP = Path(__file__).resolve().parents[2] / "scripts" / "bad_input_sweep.py"


def load_sweep():
    """scripts/bad_input_sweep.py as a module (loaded once), for the tests that run cases as it does."""
    if "bad_input_sweep" not in sys.modules:
        spec = importlib.util.spec_from_file_location("bad_input_sweep", SWEEP)
        module = importlib.util.module_from_spec(spec)
        sys.modules["bad_input_sweep"] = module
        spec.loader.exec_module(module)
    return sys.modules["bad_input_sweep"]
