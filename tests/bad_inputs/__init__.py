"""Bad and unusual inputs at the public entries: the rules' tables (``test_rules_*.py``), hypothesis beside
them, and the sweep's own tests."""

import importlib.util
import sys
from pathlib import Path

SWEEP = Path(__file__).resolve().parents[2] / "scripts" / "bad_input_sweep.py"


def load_sweep():
    """scripts/bad_input_sweep.py as a module (loaded once): its limits, and its classifier for its tests."""
    if "bad_input_sweep" not in sys.modules:
        spec = importlib.util.spec_from_file_location("bad_input_sweep", SWEEP)
        module = importlib.util.module_from_spec(spec)
        sys.modules["bad_input_sweep"] = module
        spec.loader.exec_module(module)
    return sys.modules["bad_input_sweep"]
