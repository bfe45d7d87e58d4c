"""Chapter 5 (what a training step costs) shows the paper's Table 2 as geron_lib.studies.paper stores it;
chapters 1 and 2 point at claims of the first trade-off grid, which must hold for its stored numbers."""

import re

import numpy as np
import pytest
from book_site.pages import notebook

from geron_lib.studies import tradeoffs as tx
from geron_lib.studies.paper import TABLE_1, TABLE_2
from geron_lib.studies.tradeoffs import results as tr

PAGE = "book/05_albert_tradeoffs"
GRID = tx.load_stored()
SETUP = tx.Setup()
BEST = (SETUP.hidden_size, "none")


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


def test_claims_of_chapters_1_and_2_about_the_first_grid():
    for E in (64, 16):   # chapter 2: the jump is "not resolved at that size"
        assert not tr.compare(GRID, "smoothness", (E, "all"), (E, "none")).resolved
    table = np.mean(list(tr.per_seed(GRID, "effective_rank_centred", BEST).values()))
    hidden = np.mean(list(tr.per_seed(GRID, "effective_rank_hidden_centred", BEST).values()))
    assert table > hidden                                    # chapter 1: "but the table itself ..."
    assert tr.compare(GRID, "held_out_loss", (16, "none"), BEST).mean > 0   # chapter 1: "raised"
