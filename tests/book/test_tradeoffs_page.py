"""The trade-offs chapter shows the paper's figures as geron_lib.studies.paper stores them: every Avg and
speed-up of Table 2 and every Avg of Tables 3 and 4, each in its row of the tables the stored page prints."""

import re

import pytest
from book_site.pages import notebook

from geron_lib.studies.paper import TABLE_1, TABLE_2, TABLE_3_SCORES, TABLE_4_SCORES

PAGE = "book/05_albert_tradeoffs"
NAMES = {"none": "not shared", "all": "all shared", "attention": "attention shared", "ffn": "FFN shared"}


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


@pytest.mark.parametrize("row", TABLE_3_SCORES + TABLE_4_SCORES, ids=lambda r: f"T{r.table} {r.model}")
def test_tables_3_and_4_averages(table_rows, row):
    key = [str(row.table), str(row.config.E), NAMES[row.config.sharing]]
    shown = [r for r in table_rows if r[:3] == key]
    assert len(shown) == 1 and shown[0][3] == str(row.average)
