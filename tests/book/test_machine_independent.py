"""No output that strict nbval compares may depend on the machine (the other half of the check is
`make test`'s build, run on another BLAS kernel and thread count than the stored outputs were: see the
Makefile). A compared cell reads no machine fact (caches, cores, clocks, load, BLAS), and a compared output
prints no rounding noise: a float in exponent notation below 1e-12, whose digits are the CPU's."""

import re

import pytest
from book_site.pages import ROOT
from nbval.plugin import find_comment_markers, find_metadata_tags

NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))

# Calls whose results differ between machines: a compared cell must not show them
MACHINE_FACTS = re.compile(r"\b(cache_sizes|cpu_count|sched_getaffinity|threadpool_info|getloadavg|"
                           r"perf_counter|process_time|monotonic|sample_seconds|platform\.\w+|"
                           r"time\.time|datetime\.now|getrusage|psutil)\s*\(")
# 3.0e-15, 1.1e-15, 6.7e-16: exponent 13 or more, negative
NOISE = re.compile(r"(?<![\w.])\d(?:\.\d+)?e-(?:1[3-9]|[2-9]\d|\d{3})\b")


def compared_cells(path):
    import nbformat

    for n, cell in enumerate(c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"):
        options = dict(find_metadata_tags(cell.metadata)) | dict(find_comment_markers(cell.source))
        if options.get("check", True) and not options.get("skip"):
            yield n, cell


def shown_text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        data = output.get("data", {})
        parts += [data.get(k, "") for k in ("text/plain", "text/markdown", "text/latex")]
    return "".join(p if isinstance(p, str) else "".join(p) for p in parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_compared_cell_reads_the_machine(path):
    found = [(n, m[1]) for n, cell in compared_cells(path) for m in MACHINE_FACTS.finditer(cell.source)]
    assert not found, (f"{path.name}: these code cells (by index) show machine facts to strict nbval; tag "
                       f"them nbval-ignore-output or compute the value into the prose: {found}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_compared_output_prints_rounding_noise(path):
    found = [(n, m[0]) for n, cell in compared_cells(path) for m in NOISE.finditer(shown_text(cell))]
    assert not found, (f"{path.name}: these code cells (by index) print rounding noise, whose digits differ "
                       f"between CPUs; show a bound instead (geron_lib.notebook.noise): {found}")


def test_the_patterns_catch_what_broke_on_another_machine():
    assert NOISE.search("of an output: 3.0e-15") and NOISE.search("(largest difference 1.1e-15).")
    assert not NOISE.search("layer_norm_eps=1e-12") and not NOISE.search("lr 2.0e-03")
    assert MACHINE_FACTS.search("caches = cache_sizes()  # this machine's")
    assert not MACHINE_FACTS.search("cache_sizes_doc = 1")
