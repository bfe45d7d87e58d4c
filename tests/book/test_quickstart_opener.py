"""The quickstart opens with why a reader should care: a few numbers, before the first example, each with the
chapter it comes from, each computed (shown with {eval}, none typed, none from a trained model), and each
saying what the library says."""

import ast
import re

import nbformat
import pytest
from book_site.pages import ROOT

from geron_lib import PRESETS, count_parameters
from geron_lib.config import SHARING
from geron_lib.costs.flops import count_flops

BOOK = ROOT / "book"
QUICKSTART = nbformat.read(BOOK / "00_quickstart.ipynb", as_version=4)
IDS = [c.get("id") for c in QUICKSTART.cells]
NUMBERS, OPENER = (QUICKSTART.cells[IDS.index(i)] for i in ("quickstart-why-numbers", "quickstart-why"))
CHAPTERS = {"01_factorised_embeddings", "02_cross_layer_sharing", "03_output_projection",
            "04_dynamic_masking", "05_albert_tradeoffs", "06_savings_in_training"}
LINK = re.compile(r"\[[^\]]+\]\(([\w]+)\.ipynb\)")  # [Chapter title](notebook.ipynb)
# What chapter 5 trains and the experiments store: the opening quotes none of it
TRAINED = tuple(f"geron_lib.studies.{m}" for m in ("tradeoffs", "finetuning", "dynamic_masking", "hf_gap",
                                                  "stored", "data"))


def test_the_opener_comes_first_computed_by_a_hidden_cell():
    headings = [i for i, c in enumerate(QUICKSTART.cells) if c.cell_type == "markdown"
                and re.search(r"^## ", c.source, re.MULTILINE)]
    assert headings[0] == IDS.index("quickstart-why"), "the opener is the page's first section"
    assert "## ALBERT base in the library" in QUICKSTART.cells[headings[1]].source  # then the library
    assert IDS.index("quickstart-why-numbers") < IDS.index("quickstart-why")
    assert {"remove-input", "remove-output"} <= set(NUMBERS.metadata.get("tags", []))


def test_the_opener_names_the_chapter_of_each_number():
    assert set(LINK.findall(OPENER.source)) == CHAPTERS
    assert CHAPTERS <= {p.stem for p in BOOK.glob("*.ipynb")}


def test_the_opener_types_no_number():
    prose = re.sub(r"\{\w+\}`[^`]*`", " ", OPENER.source)  # {eval}
    prose = re.sub(r"\]\([^)]*\)", "]", prose)  # the links' targets: 01_factorised_embeddings.ipynb
    prose = re.sub(r"\$[^$]+\$", " ", prose)  # formulas: 2H^2 is a formula, not a figure
    typed = re.findall(r"\d[\d,.]*", prose)
    assert not typed, f"numbers typed into the opener's prose instead of computed: {typed}"


def test_the_opener_reads_nothing_trained_or_stored():
    tree = ast.parse(NUMBERS.source)
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    modules |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    assert not [m for m in modules if m.startswith(TRAINED)]
    assert not re.search(r"load|json|open\(", NUMBERS.source)


@pytest.fixture(scope="module")
def shown():
    """The names the opener shows, as the page computes them (after the page's imports)."""
    imports = next(c.source for c in QUICKSTART.cells
                   if c.cell_type == "code" and "import geron_lib" in c.source)
    namespace = {}
    exec("\n".join(line for line in imports.splitlines() if not line.startswith("%")), namespace)
    exec(NUMBERS.source, namespace)
    return namespace


def test_the_opener_says_what_the_library_says(shown):
    albert, bert = PRESETS["albert-base-v2"], PRESETS["bert-base"]
    assert (albert.hidden_size, albert.num_hidden_layers) == (bert.hidden_size, bert.num_hidden_layers)
    assert shown["qs_why_albert"] == count_parameters(albert, pooler=True).total
    assert shown["qs_why_bert"] / shown["qs_why_albert"] == shown["qs_why_ratio"] > 1
    # "two ideas account for nearly all of the difference": sharing and factorising leave under 1 % of it
    V, E, H = albert.vocab_size, albert.embedding_size, albert.hidden_size
    assert (shown["qs_why_direct"], shown["qs_why_factorised"]) == (V * H, V * E + E * H + H)
    gap = shown["qs_why_bert"] - shown["qs_why_albert"]
    explained = (shown["qs_why_unshared"] - shown["qs_why_albert"]) + (shown["qs_why_direct"]
                                                                         - shown["qs_why_factorised"])
    assert 0 <= gap - explained < 0.01 * gap
    # "sharing saves parameters, not arithmetic": the counts differ between the modes, the FLOPs do not
    T = shown["qs_why_T"]
    assert len({count_parameters(albert.replace(sharing=mode)).total for mode in SHARING}) == len(SHARING)
    assert {count_flops(albert.replace(sharing=mode), T).total for mode in SHARING} == {shown["qs_why_flops"]}
    # "2H^2 ... hH^2 ... times as many", at BERT base's size
    Hb, h = bert.hidden_size, bert.num_attention_heads
    assert (shown["qs_why_concat_vo"], shown["qs_why_sum_vo"]) == (2 * Hb**2, h * Hb**2)
    assert shown["qs_why_vo_ratio"] == h / 2


def test_the_masks_say_what_the_opener_says(shown):
    # one mask static; fewer distinct masks than stored copies (short sentences repeat); more with fresh
    # draws, but fewer than the epochs
    assert shown["qs_why_static"] == pytest.approx(1)
    assert 1 < shown["qs_why_duplicated"] < shown["qs_why_copies"]
    assert shown["qs_why_copies"] < shown["qs_why_dynamic"] < shown["qs_why_epochs"]
