"""The two pip environments. binder/requirements.txt is the reader's: all that Binder (repo2docker) installs.
requirements.txt, the developer's, includes it and adds the test and lint tools. No package is pinned
twice (but torch, pinned again as its CPU build, from PyTorch's CPU index), Binder gets no test tool, and
Binder installs every module that the chapters import and the library imports when they import it. Offline:
imports are mapped to distributions, and dependencies followed, through this environment's installed
metadata (the pins installed by `make install`)."""

import ast
import json
import re
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest
from book_site.pages import ROOT, config
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

BINDER = ROOT / "binder"
LIBRARY = "geron_lib"

#: Test runners, their plugins, linters and the PDF joiner: the developer's file only. (Not playwright, which
#: the browser tests use: otter-grader needs nbconvert[webpdf], which needs it, so Binder installs it anyway.)
TEST_TOOLS = {"pytest", "pytest-timeout", "pytest-xdist", "nbval", "hypothesis", "ruff", "import-linter",
              "pypdf", "pypdfium2"}

#: Imported by every student notebook, which `otter assign` writes (`import otter`, then grader.check)
STUDENT_IMPORTS = {"otter"}

#: repo2docker's configuration files besides requirements.txt: once binder/ exists, repo2docker reads none of
#: them at the root, so a copy there would silently not apply
REPO2DOCKER_FILES = ("runtime.txt", "environment.yml", "apt.txt", "postBuild", "start", "Pipfile",
                     "Pipfile.lock", "setup.py", "Dockerfile", "install.R", "DESCRIPTION", "default.nix")

COLAB_MARKER = "# Colab: install geron_lib when it is not importable."  # scripts/colab_cells.py, MARKER

#: PyTorch's index of CPU-only wheels: PyPI's Linux x86_64 torch wheels are the CUDA builds (gigabytes of
#: nvidia-* and cuda-toolkit packages); the CPU build, version V+cpu, is on this index only
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
#: The local version label of PyTorch's CPU builds on that index
CPU_BUILD = "cpu"


# ------------------------------------------------------------------------------------------------------------
# requirements files


@dataclass
class RequirementsFile:
    """A requirements file of this repository's form: ``-r`` includes (resolved against the including file's
    folder, as pip does), ``-e`` paths (relative to the folder pip runs in, as pip reads them),
    ``--extra-index-url`` indexes, and requirements."""

    includes: list[Path] = field(default_factory=list)
    editables: list[str] = field(default_factory=list)
    requirements: list[Requirement] = field(default_factory=list)
    extra_index_urls: list[str] = field(default_factory=list)


def read_requirements(path: Path) -> RequirementsFile:
    parsed = RequirementsFile()
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        option, _, value = line.partition(" ")
        if option == "-r":
            parsed.includes.append((path.parent / value.strip()).resolve())
        elif option == "-e":
            parsed.editables.append(value.strip())
        elif option == "--extra-index-url":
            parsed.extra_index_urls.append(value.strip())
        elif line.startswith("-"):
            raise AssertionError(f"{path.name} line {number}: option {option!r} is not one this test reads")
        else:
            parsed.requirements.append(Requirement(line))
    return parsed


@cache
def binder() -> RequirementsFile:
    return read_requirements(BINDER / "requirements.txt")


@cache
def root() -> RequirementsFile:
    return read_requirements(ROOT / "requirements.txt")


def names(requirements) -> set[str]:
    return {canonicalize_name(r.name) for r in requirements}


@cache
def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


@cache
def closure(requirements: tuple[Requirement, ...]) -> frozenset[str]:
    """Every distribution that installing ``requirements`` installs, followed through installed metadata."""
    seen, todo = set(), list(requirements)
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if (name, frozenset(req.extras)) in seen:
            continue
        seen.add((name, frozenset(req.extras)))
        if name == canonicalize_name(pyproject()["project"]["name"]):
            project = pyproject()["project"]
            todo += [Requirement(r) for r in project["dependencies"]]
            todo += [Requirement(r) for extra in req.extras for r in project["optional-dependencies"][extra]]
            continue
        try:
            installed = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise AssertionError(f"{name} is required but not installed here: run make install") from None
        assert installed.version in req.specifier, (
            f"{name} {installed.version} is installed, {req} is required: pip install -r requirements.txt")
        requires = installed.requires or []
        for dependency in map(Requirement, requires):
            if dependency.marker is None or any(dependency.marker.evaluate({"extra": extra})
                                                for extra in {"", *req.extras}):
                todo.append(dependency)
    return frozenset(name for name, _ in seen)


def library() -> Requirement:
    """The library as binder/requirements.txt installs it: ``-e .``, or ``-e .[extra,...]`` with extras (read
    by packaging, as the requirement ``geron-lib[extra,...]``)."""
    editables = binder().editables
    wrong = (f"binder/requirements.txt installs the library once, by -e . (with its extras in brackets, if "
             f"any), not {editables}")
    assert len(editables) == 1 and editables[0][:2] in (".", ".["), wrong
    try:
        return Requirement(pyproject()["project"]["name"] + editables[0][1:])
    except InvalidRequirement:
        raise AssertionError(wrong) from None


def binder_installs() -> frozenset[str]:
    """What Binder installs: the Binder file's requirements, and the library with its dependencies."""
    return closure((*binder().requirements, library()))


def extras() -> list[Requirement]:
    """The requirements of the library's optional extras (pyproject.toml), all of them."""
    optional = pyproject()["project"]["optional-dependencies"]
    return [Requirement(r) for extra in optional.values() for r in extra]


def extras_install() -> frozenset[str]:
    return closure(tuple(extras()))


# ------------------------------------------------------------------------------------------------------------
# imports


def parse_notebook_cells(path: Path) -> list[ast.Module]:
    """The code cells of a notebook as Python, IPython magics dropped, the Colab install cell left out (it
    imports google.colab on Colab only; tests/book/test_colab_cells.py checks it)."""
    cells = []
    for cell in json.loads(path.read_text())["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or source.startswith(COLAB_MARKER):
            continue
        lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
        cells.append(ast.parse("\n".join(lines), filename=str(path)))
    return cells


def imports(tree: ast.Module, package: str = "", *, on_import_only: bool):
    """Absolute names of the modules ``tree`` imports (relative imports resolved against ``package``), each
    with the name of every submodule it may import (``from a import b``: ``a.b``). ``on_import_only``: only
    those that run when the module itself runs, not within a function or under an ``if`` or a ``try``."""
    def walk(nodes):
        for node in nodes:
            if isinstance(node, ast.Import):
                yield from (alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, *([base] if base else [])])
                yield base
                yield from (f"{base}.{alias.name}" for alias in node.names)
            elif not on_import_only or isinstance(node, ast.ClassDef | ast.With):
                yield from walk(ast.iter_child_nodes(node))
    return walk(tree.body)


def module_file(name: str) -> Path | None:
    """The file of module ``name`` in this repository (geron_lib, or a package at the root such as
    assignments/), None for a module from elsewhere."""
    path = ROOT.joinpath(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def parse_module(path: Path) -> tuple[ast.Module, str]:
    """A module's tree, and the package its relative imports start from."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ast.parse(path.read_text(), filename=str(path)), ".".join(parts[:-1])


def third_party(modules: set[str]) -> set[str]:
    tops = {name.split(".")[0] for name in modules if name}
    return {top for top in tops if top not in sys.stdlib_module_names and module_file(top) is None}


def run_on_import(trees: list[tuple[ast.Module, str]]) -> set[str]:
    """Third-party modules imported when ``trees`` run, following imports of this repository's modules (and
    the packages around them) to their own module-level imports."""
    found, done, todo = set(), set(), list(trees)
    while todo:
        tree, package = todo.pop()
        modules = set(imports(tree, package, on_import_only=True))
        found |= third_party(modules)
        for name in modules:
            parts = name.split(".")
            for depth in range(1, len(parts) + 1):
                path = module_file(".".join(parts[:depth]))
                if path is not None and path not in done:
                    done.add(path)
                    todo.append(parse_module(path))
    return found


def notebooks() -> list[Path]:
    return sorted((ROOT / "book").glob("*.ipynb"))


def reader_trees() -> list[tuple[ast.Module, str]]:
    """Every chapter cell as (tree, package); run_on_import follows what they import of this repository
    (geron_lib, and the assignments package the teachers' page reads)."""
    return [(cell, "") for path in notebooks() for cell in parse_notebook_cells(path)]


@cache
def installed_modules() -> dict[str, list[str]]:
    return metadata.packages_distributions()


def distributions_of(module: str) -> set[str]:
    return {canonicalize_name(d) for d in installed_modules().get(module, [])}


def not_installed(modules: set[str], installed: frozenset[str]) -> dict[str, set[str]]:
    """The modules of ``modules`` that no distribution of ``installed`` provides, with their providers."""
    return {m: distributions_of(m) for m in sorted(modules) if not distributions_of(m) & installed}


# ------------------------------------------------------------------------------------------------------------
# the tests


def test_the_root_file_is_the_binder_file_and_the_test_tools():
    assert root().includes == [(BINDER / "requirements.txt").resolve()], (
        "requirements.txt must include binder/requirements.txt, and only it")
    assert not binder().includes, "binder/requirements.txt includes nothing: it is the one source"
    assert root().editables == [], "the library is installed once, by `-e .` in binder/requirements.txt"
    library()  # which says how binder/requirements.txt installs it
    assert names(root().requirements) == TEST_TOOLS, (
        "requirements.txt adds exactly the test and lint tools (TEST_TOOLS here); what readers need goes to "
        "binder/requirements.txt")


def is_pin(requirement: Requirement) -> bool:
    specifiers = [*requirement.specifier]
    return len(specifiers) == 1 and specifiers[0].operator == "==" and "*" not in specifiers[0].version


def pinned_version(requirement: Requirement) -> str:
    assert is_pin(requirement), f"{requirement} is not an exact pin"
    return next(iter(requirement.specifier)).version


def cpu_builds() -> list[Requirement]:
    """The Binder file's pins of an extra's exact pin V as its CPU build, V+cpu: the one second pin allowed
    (torch: PyPI's wheel of V is the CUDA build)."""
    extra_pins = {canonicalize_name(r.name): pinned_version(r) for r in extras() if is_pin(r)}
    return [r for r in binder().requirements
            if is_pin(r) and canonicalize_name(r.name) in extra_pins
            and pinned_version(r) == f"{extra_pins[canonicalize_name(r.name)]}+{CPU_BUILD}"]


def test_every_package_is_pinned_exactly_once():
    pinned = [*binder().requirements, *root().requirements]
    loose = [str(r) for r in pinned if not is_pin(r)]
    assert not loose, f"pin these exactly (name==version): {loose}"
    # pyproject.toml's extras pin too: Binder installs one with `-e .[name]` instead of pinning it again,
    # except to name the same version's CPU build (cpu_builds)
    pinned = [r for r in pinned if r not in cpu_builds()] + [r for r in extras() if is_pin(r)]
    twice = sorted(name for name, n in Counter(canonicalize_name(r.name) for r in pinned).items() if n > 1)
    assert not twice, ("pinned more than once across requirements.txt, binder/requirements.txt and the "
                       f"extras of pyproject.toml: {twice}")


def test_binder_installs_no_test_tool_even_indirectly():
    assert not binder_installs() & TEST_TOOLS, (
        f"Binder would install test tools: {sorted(binder_installs() & TEST_TOOLS)}")


def test_the_root_file_adds_only_what_binder_does_not_install():
    # else Binder installs a package the root file pins, unpinned: readers could run another version than the
    # tests ran
    also = sorted(names(root().requirements) & binder_installs())
    assert not also, f"Binder installs these too: pin them in binder/requirements.txt instead: {also}"


def test_binder_installs_the_hf_extra_with_torchs_cpu_build():
    # Appendices A1 and A2 run torch, transformers and accelerate (the hf extra): Binder installs them, and
    # torch as the CPU build of the extra's exact version, from PyTorch's CPU index, the one index added
    assert "hf" in library().extras, "binder/requirements.txt installs the library with the hf extra"
    optional = pyproject()["project"]["optional-dependencies"]
    hf = {canonicalize_name(r.name): r for r in map(Requirement, optional["hf"])}
    assert {"torch", "transformers", "accelerate"} <= hf.keys()
    assert is_pin(hf["torch"]) and "+" not in pinned_version(hf["torch"]), (
        "the hf extra pins torch exactly, without a local label (a range would admit newer CUDA wheels)")
    assert [str(r) for r in cpu_builds()] == [f"torch=={pinned_version(hf['torch'])}+{CPU_BUILD}"], (
        "binder/requirements.txt pins torch as the CPU build of the hf extra's version, torch==V+cpu")
    assert binder().extra_index_urls == [TORCH_CPU_INDEX], (
        f"binder/requirements.txt adds PyTorch's CPU index, and only it: {binder().extra_index_urls}")
    assert root().extra_index_urls == [], "requirements.txt reads the index from the Binder file it includes"


def test_binder_reads_its_own_folder_and_installs_the_library_from_the_root():
    # repo2docker reads only binder/ once it exists, and runs pip in the repository root (as make install
    # does), where pip resolves `-e .`: the root holds the library's pyproject.toml
    ignored = [name for name in REPO2DOCKER_FILES if (ROOT / name).exists()]
    assert not ignored, f"repo2docker ignores these at the root once binder/ exists: move them: {ignored}"
    assert not (ROOT / ".binder").exists(), "repo2docker refuses both binder/ and .binder/"
    assert pyproject()["project"]["name"] == "geron-lib"
    runtime = (BINDER / "runtime.txt").read_text().strip()
    assert re.fullmatch(r"python-3\.\d+", runtime), f"binder/runtime.txt must say python-3.x, not {runtime!r}"
    assert runtime.removeprefix("python-") in SpecifierSet(pyproject()["project"]["requires-python"])
    assert f"{sys.version_info.major}.{sys.version_info.minor}" == runtime.removeprefix("python-"), (
        "the pins are checked on one Python: binder/runtime.txt's")


def test_binder_serves_the_interface_the_launch_buttons_open():
    interface = config()["launch_buttons"]["notebook_interface"]
    assert canonicalize_name(interface) in names(binder().requirements)
    # the chapters' MyST (exercises, admonitions, {eval} numbers) renders in JupyterLab by jupyterlab-myst
    assert "jupyterlab-myst" in names(binder().requirements)


def test_binder_installs_what_the_chapters_import_when_they_run():
    modules = run_on_import(reader_trees()) | STUDENT_IMPORTS
    missing = not_installed(modules, binder_installs())
    assert not missing, (f"imported by a chapter (or the library, as a chapter imports it), not installed by "
                         f"binder/requirements.txt: {missing}")


@pytest.mark.hf
def test_every_import_of_the_chapters_and_the_library_has_an_environment():
    # Binder's, or an optional extra's (torch and the like, which what imports them checks for first); the
    # extras' dependencies are read from their installed metadata
    for requirement in extras():
        try:
            metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            pytest.importorskip(requirement.name)  # skips, naming it (in CI: fails)
    trees = reader_trees() + [parse_module(p) for p in sorted((ROOT / LIBRARY).rglob("*.py"))]
    modules = set().union(*(third_party(set(imports(t, p, on_import_only=False))) for t, p in trees))
    missing = not_installed(modules, binder_installs() | extras_install())
    assert not missing, f"imported, installed neither by Binder nor by an extra of pyproject.toml: {missing}"
