"""The README's layout and the contributor docs describe the library as it is."""

import re

from book_site.pages import ROOT

LIBRARY = ROOT / "geron_lib"
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(LIBRARY.rglob("README.md"))]


def layout() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return readme.split("## Layout", 1)[1].split("\n## ", 1)[0]


def test_readme_layout_names_every_package_and_module():
    text = layout()
    packages = sorted(p.parent for p in LIBRARY.rglob("__init__.py") if p.parent != LIBRARY)
    missing = [p.relative_to(LIBRARY).as_posix() + "/" for p in packages if f"{p.name}/" not in text]
    assert not missing, f"README's layout leaves out these packages: {missing}"
    # every module, except the per-chapter ones under notebook/widgets and notebook/exercises
    modules = [m for m in LIBRARY.rglob("*.py")
               if m.name != "__init__.py" and m.parent.name not in ("widgets", "exercises")]
    missing = sorted(m.relative_to(LIBRARY).as_posix() for m in modules if m.name not in text)
    assert not missing, f"README's layout leaves out these modules: {missing}"


def test_every_file_the_docs_cite_exists():
    path = re.compile(r"`((?:tests|scripts|benchmarks|geron_lib|book)/[\w/.-]+\.\w+)`")
    cited = {(doc, p) for doc in DOCS for p in path.findall(doc.read_text(encoding="utf-8"))
             if "NN_" not in p}  # book/NN_topic.ipynb is the template's name for a new chapter
    missing = [f"{doc.relative_to(ROOT)} cites {p}" for doc, p in sorted(cited) if not (ROOT / p).exists()]
    assert cited and not missing, missing
