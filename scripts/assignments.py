"""`make assignments` runs this: the command line of the assignments package (python -m assignments)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # before scripts/ (this file)
from assignments.__main__ import main  # noqa: E402

sys.exit(main())
