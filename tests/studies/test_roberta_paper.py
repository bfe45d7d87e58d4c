import pytest

from geron_lib.studies import roberta_paper as rp


def test_table_4_reads_as_the_paper_prints_it():
    first, bert = rp.row("RoBERTa with BOOKS + WIKI"), rp.row("BERT-large with BOOKS + WIKI")
    assert (first.data_gb, first.batch, first.steps) == (16, 8_000, 100_000)
    assert (bert.data_gb, bert.batch, bert.steps) == (13, 256, 1_000_000)
    # the rows accumulate: every RoBERTa row scores at least the one above it, on every task
    roberta = rp.TABLE_4[:4]
    for above, below in zip(roberta, roberta[1:], strict=False):
        assert all(b >= a for a, b in zip(above.scores, below.scores, strict=True)), (above, below)


def test_the_first_row_already_beats_bert_large_by_more_than_data_and_steps_add():
    # chapter 4's claim: with BERT's data and a tenth of its steps, RoBERTa's first row beats BERT-large on
    # every task, by more than ten times the data and five times the steps add on top of it
    gains = rp.gains()
    assert set(gains) == set(rp.TASKS)
    for task, g in gains.items():
        assert g["design"] > g["data and steps"] > 0, (task, g)
    assert gains["SQuAD 2.0"] == {"design": 5.5, "data and steps": 2.1}


def test_row_names_the_rows_it_knows():
    with pytest.raises(ValueError, match="model must be one of"):
        rp.row("XLNet")


def test_a_row_holds_one_score_per_task():
    with pytest.raises(ValueError, match="one figure per task"):
        rp.Row("short", 1, 1, 1, (1.0, 2.0))


def test_table_1_gives_dynamic_masking_a_few_tenths_of_a_point():
    assert rp.dynamic_gains() == {"SQuAD 2.0": 0.4, "MNLI-m": -0.3, "SST-2": 0.4}
    assert rp.sequences_ratio() == pytest.approx(8_000 * 100_000 / (256 * 1_000_000))
