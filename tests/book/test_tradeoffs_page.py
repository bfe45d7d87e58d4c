"""Chapter 5 (what a training step costs) shows the paper's Table 2 as geron_lib.studies.paper stores it."""

import re

import pytest
from book_site.pages import notebook

from geron_lib.studies.paper import TABLE_1, TABLE_2

PAGE = "book/05_albert_tradeoffs"


@pytest.fixture(scope="module")
def table_rows():
    """Every Markdown table row the stored notebook prints, as a list of its cells."""
    rows = []
    for cell in notebook(PAGE)["cells"]:
        for output in cell.get("outputs", []):
            text = "".join(output.get("data", {}).get("text/markdown", ""))
            rows += [[c.strip() for c in line.strip().strip("|").split("|")]
                     for line in text.splitlines() if re.match(r"^\|[^-]", line)]
    return rows


def test_table_2_as_the_paper_prints_it(table_rows):
    for row, sizes in zip(TABLE_2, TABLE_1, strict=True):
        shown = [r for r in table_rows if r[0] == row.model]
        assert len(shown) == 1, f"{row.model}: {len(shown)} rows"
        assert shown[0][1:4] == [f"{sizes.millions}M", str(row.average), f"{row.speedup}x"]
