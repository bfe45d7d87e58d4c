"""The expert review's definite errors stay corrected: each page says what its source shows, in the book's
notation, and computes the figures it rests on (the figures themselves are tested where they are computed:
tests/studies/test_roberta_paper.py, and the wrong-GELU check in tests/interop/test_hf_transformers.py)."""

import re

import pytest
from book_site.pages import text_of


def prose(docname: str) -> str:
    """The page's prose with its lines joined, so that a phrase broken across lines is found."""
    return re.sub(r"\s+", " ", text_of(docname))


def test_chapter_4_reads_robertas_table_4_as_it_is():
    text = prose("book/04_dynamic_masking")
    assert "credits with most of its gains" not in text  # the scale did not buy most of the gains
    for name in ("dm_t4_design", "dm_t4_more", "dm_t4_sequences"):  # the jump and the rest, computed
        assert f"{{eval}}`{name}`" in text
    assert "the design choices we explored in Section 4" in text


def test_chapter_4_says_berts_released_pipeline_duplicates_its_masks():
    text = prose("book/04_dynamic_masking")
    assert "**static** (BERT)" not in text
    assert "`dupe_factor`" in text


def test_appendix_a1_computes_the_tolerance_margins():
    text = prose("book/A1_hugging_face")
    assert "order of magnitude on both sides" not in text
    assert "{eval}`tolerance_margins`" in text


def test_chapter_3_reads_bhojanapalli_in_the_books_notation():
    paragraph = prose("book/03_output_projection").split("**Bhojanapalli et al.**")[1].split("**")[0]
    assert "smaller embedding size" not in paragraph
    assert "the $H$ of this book" in paragraph and "not ALBERT's token-table width $E$" in paragraph


@pytest.mark.parametrize("docname", ["book/02_cross_layer_sharing", "book/03_output_projection",
                                     "book/05_albert_tradeoffs"])
def test_the_machines_cores_are_computed_not_typed(docname):
    assert not re.search(r"\btwo[- ](CPU )?cores?\b|\btwo-core\b|\b2[- ]cores?\b", prose(docname))


def test_chapter_2_does_not_claim_the_caches_set_the_times():
    text = prose("book/02_cross_layer_sharing")
    assert "The bytes explain the order" not in text and "that is why `ffn` comes close" not in text
    assert "{eval}`time_gap_text`" in text and "{eval}`fits_text`" in text
