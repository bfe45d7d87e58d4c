"""The import-linter contracts that say which modules may import torch or jax name the others, every one: a
module of geron_lib left out of their source_modules would be free to import them. So every module but the
ones each contract allows (and the package files that only describe their package) is a source."""

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"][
    "contracts"]
#: The package files of packages that hold allowed modules: a contract cannot list one without its modules
PACKAGE_FILES = {"geron_lib", "geron_lib.interop", "geron_lib.studies"}
ALLOWED = {
    "torch": {"geron_lib.interop.torch_models", "geron_lib.interop.torch_mlm",
              "geron_lib.interop.hf_training", "geron_lib.studies.hf_gap"},
    "jax": {"geron_lib.interop.jax_attention", "geron_lib.interop.jax_programs",
            "geron_lib.studies.jax_timing"},
}


def modules() -> set[str]:
    found = set()
    for path in (ROOT / "geron_lib").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def contract(forbidden: str) -> dict:
    (found,) = [c for c in CONTRACTS if c["type"] == "forbidden" and forbidden in c["forbidden_modules"]]
    return found


@pytest.mark.parametrize("forbidden", sorted(ALLOWED))
def test_every_other_module_is_forbidden_to_import(forbidden):
    sources = contract(forbidden)["source_modules"]
    free = {m for m in modules() if not any(m == s or m.startswith(s + ".") for s in sources)}
    assert free == ALLOWED[forbidden] | PACKAGE_FILES

