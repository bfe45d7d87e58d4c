"""The ALBERT paper's tables: the rows describe the published geometry, the counts follow the formula by
hand, and the accounting claims the chapters make hold."""

import pytest

from geron_lib import PRESETS, count_parameters
from geron_lib.studies import roberta_paper
from geron_lib.studies.paper import (
    PLAIN,
    PRETRAINING,
    RECIPE,
    TABLE_1,
    TABLE_2,
    TABLE_3,
    TABLE_3_SCORES,
    TABLE_4,
    TABLE_4_SCORES,
    Accounting,
    accountings,
    extra_needed,
    largest_count,
    markdown_table,
    pretraining_table,
    reproduces,
    reproducing,
    to_millions,
)


# by hand: embeddings (V + 512 + 2) E + 2 E, projection E H + H when E < H, and per stored sublayer:
# attention 4 (H^2 + H) + 2 H, FFN 2 H F + F + H + 2 H
def by_hand(V, E, H, L, sharing, F=None):
    F = 4 * H if F is None else F
    attention, ffn = 4 * (H * H + H) + 2 * H, 2 * H * F + F + H + 2 * H
    copies = {"none": (L, L), "all": (1, 1), "attention": (1, L), "ffn": (L, 1)}[sharing]
    return (V + 514) * E + 2 * E + (E * H + H if E < H else 0) + copies[0] * attention + copies[1] * ffn


def test_rows_are_the_published_geometry_and_figures():
    assert [(r.model, r.millions) for r in TABLE_1] == [
        ("BERT base", 108), ("BERT large", 334), ("ALBERT base", 12), ("ALBERT large", 18),
        ("ALBERT xlarge", 60), ("ALBERT xxlarge", 235)]
    assert [(r.config.num_hidden_layers, r.config.hidden_size, r.config.E) for r in TABLE_1] == [
        (12, 768, 768), (24, 1024, 1024), (12, 768, 128), (24, 1024, 128), (24, 2048, 128), (12, 4096, 128)]
    assert all(r.config.intermediate_size == 4 * r.config.hidden_size for r in TABLE_1)
    assert [r.millions for r in TABLE_3] == [87, 89, 93, 108, 10, 12, 16, 31]
    assert [r.millions for r in TABLE_4] == [31, 83, 57, 108, 12, 64, 38, 89]
    for r in TABLE_3 + TABLE_4:
        c = r.config
        assert (c.vocab_size, c.hidden_size, c.num_hidden_layers, c.num_attention_heads, c.intermediate_size,
                c.max_position_embeddings, c.type_vocab_size) == (30000, 768, 12, 12, 3072, 512, 2)
        assert f"E = {c.E}" in r.model


@pytest.mark.parametrize("row", TABLE_1 + TABLE_3 + TABLE_4, ids=lambda r: f"T{r.table} {r.model}")
def test_plain_count_is_the_formula(row):
    c = row.config
    assert PLAIN.count(c) == by_hand(c.vocab_size, c.E, c.hidden_size, c.num_hidden_layers, c.sharing)


def test_accounting_items():
    base = TABLE_3[3].config  # not-shared, E = H = 768
    H = 768
    assert Accounting(pooler=True).count(base) - PLAIN.count(base) == H * H + H
    assert Accounting(projection="always").count(base) - PLAIN.count(base) == H * H + H
    assert Accounting(vocab_size=30522).count(base) - PLAIN.count(base) == 522 * 768
    small = TABLE_3[1].config  # E = 128
    assert Accounting(projection="never").count(small) == PLAIN.count(small) - (128 * H + H)
    assert Accounting(projection="always").count(small) == PLAIN.count(small)
    heads = Accounting(pretraining_heads=True).count(small) - PLAIN.count(small)
    assert heads == (H * 128 + 128) + 2 * 128 + 30000 + (2 * H + 2)  # MLM dense, LN, bias; SOP
    bert = TABLE_1[0].config  # BERT: no E -> H map whatever the accounting says
    assert Accounting(projection="always").count(bert) == PLAIN.count(bert)
    assert len(accountings()) == 24 and str(Accounting(pooler=True, vocab_size=30000)) == (
        "encoder + pooler, V = 30,000")


def test_rounding():
    assert [to_millions(11_499_999), to_millions(11_500_000)] == [11, 12]
    assert to_millions(11_999_999, "down") == 11
    assert [to_millions(11_000_001, "up"), to_millions(11_000_000, "up")] == [12, 11]


def _not_shared(rows):
    return [r for r in rows if r.config.sharing == "none"]


def _shared(rows):
    return [r for r in rows if r.config.sharing != "none"]


def test_table_3_by_hand():
    # embeddings (30000 + 512 + 2) 64 + 2 64 = 1,953,024; E -> H 64 768 + 768 = 49,920; one block
    # 4 (768^2 + 768) + 2 768 + 2 768 3072 + 3072 + 768 + 2 768 = 7,087,872
    # not-shared E = 64: 2,002,944 + 12 blocks = 87,057,408 -> 87 (the figure);
    # all-shared E = 64: 2,002,944 + 1 block = 9,090,816 -> 9, not 10,
    # but with the pooler (768^2 + 768 = 590,592) 9,681,408 -> 10
    assert PLAIN.count(TABLE_3[0].config) == 87_057_408 == by_hand(30000, 64, 768, 12, "none")
    assert PLAIN.count(TABLE_3[4].config) == 9_090_816 == by_hand(30000, 64, 768, 12, "all")
    assert to_millions(9_090_816) == 9 and to_millions(9_090_816 + 590_592) == 10


def test_no_one_accounting_reproduces_a_whole_table():
    for rows in (TABLE_1, TABLE_3, TABLE_4, TABLE_1[:4]):
        for rounding in ("nearest", "down", "up"):
            assert reproducing(rows, rounding) == []


def test_split_accounting_reproduces_every_row_but_xlarge_and_xxlarge():
    # not-shared models (BERT base and large too): the encoder alone with ALBERT's V = 30000
    assert reproducing(_not_shared(TABLE_1 + TABLE_3 + TABLE_4))[0] == Accounting(vocab_size=30000)
    # shared models: the encoder and the pooler, V = 30000, and nothing else in our set
    shared = _shared(TABLE_1[:4] + TABLE_3 + TABLE_4)
    assert reproducing(shared) == [Accounting(pooler=True, vocab_size=30000)]
    # BERT base with its own V = 30522 rounds to 109, not 108, unless rounded down
    assert to_millions(PLAIN.count(TABLE_1[0].config)) == 109
    assert reproduces(Accounting(vocab_size=30522), TABLE_1[:1], "down")


def test_rounding_up_reading_fits_tables_3_and_4_but_not_albert_large():
    plain = Accounting(vocab_size=30000)
    assert reproduces(plain, _shared(TABLE_3 + TABLE_4), "up")
    assert reproduces(plain, TABLE_1[2:3], "up") and not reproduces(plain, TABLE_1[3:4], "up")
    # with the pooler, rounded to the nearest million, ALBERT base and large both fit
    assert reproduces(Accounting(pooler=True, vocab_size=30000), TABLE_1[2:4])


def test_what_the_shared_rows_need():
    H = 768
    pooler = H * H + H
    shared = [extra_needed(r) for r in _shared(TABLE_3 + TABLE_4)]
    low, high = max(lo for lo, _ in shared), min(hi for _, hi in shared)
    assert low <= pooler < high
    heads = Accounting(pretraining_heads=True).count(TABLE_3[5].config) - PLAIN.count(TABLE_3[5].config)
    assert heads < low  # the pretraining heads alone are too small
    assert (30522 - 30000) * 256 < low  # so is BERT's larger vocabulary, up to E = 256
    not_shared = [extra_needed(r) for r in _not_shared(TABLE_3 + TABLE_4)]
    assert max(lo for lo, _ in not_shared) <= 0 < min(hi for _, hi in not_shared) <= pooler


def test_xlarge_and_xxlarge_stay_short():
    xlarge, xxlarge = TABLE_1[4], TABLE_1[5]
    assert reproducing([xlarge], "nearest") == reproducing([xlarge], "down") == []
    # only rounding up, with the pooler and both pretraining heads, reaches 60M
    assert all(a.pooler and a.pretraining_heads for a in reproducing([xlarge], "up"))
    assert largest_count(xlarge) < 59_500_000
    # that rule fits the other shared rows up to E = 256 but not the shared rows at E = 768
    up_rule = Accounting(pooler=True, pretraining_heads=True, vocab_size=30000)
    shared = [r for r in TABLE_1[:5] + TABLE_3 + TABLE_4 if r.config.sharing != "none"]
    assert all(reproduces(up_rule, [r], "up") == (r.config.E < 768) for r in shared)
    for rounding in ("nearest", "down", "up"):
        assert reproducing([xxlarge], rounding) == []
    assert largest_count(xxlarge) < 234_000_000  # every rounding needs more than 234M
    with_pooler = Accounting(pooler=True).count(xxlarge.config)
    assert with_pooler == by_hand(30000, 128, 4096, 12, "all") + 4096 * 4096 + 4096


def test_markdown_table():
    text = markdown_table(TABLE_3[:2], {"plain": PLAIN})
    lines = text.splitlines()
    assert len(lines) == 4 and lines[0].startswith("| Table | Model | Paper | plain (exact)")
    assert "87,057,408" in lines[2] and "+0.06M" in lines[2]


def test_scores_rows_are_the_published_models():
    # Table 2 is Table 1's six models; Tables 3 and 4's scores are the rows whose sizes TABLE_3 and TABLE_4
    # hold, in the same order
    assert [(r.model, r.config) for r in TABLE_2] == [(r.model, r.config) for r in TABLE_1]
    assert [(r.model, r.config) for r in TABLE_3_SCORES] == [(r.model, r.config) for r in TABLE_3]
    assert [(r.model, r.config) for r in TABLE_4_SCORES] == [(r.model, r.config) for r in TABLE_4]
    assert [(r.average, r.speedup) for r in TABLE_2] == [(82.3, 4.7), (85.2, 1.0), (80.1, 5.6), (82.4, 1.7),
                                                         (85.5, 0.6), (88.7, 0.3)]
    assert all(r.speedup is None for r in TABLE_3_SCORES + TABLE_4_SCORES)


@pytest.mark.parametrize("row", TABLE_2 + TABLE_3_SCORES + TABLE_4_SCORES,
                         ids=lambda r: f"T{r.table} {r.model}")
def test_each_avg_is_the_mean_of_its_tasks_as_printed(row):
    # the caption's rule, from the transcribed columns: a slip in any figure of a row would show here
    assert abs(row.task_average() - row.average) <= 0.05 + 1e-9


def test_the_same_model_across_tables():
    # BERT base is the not-shared E = 768 row of Tables 3 and 4; ALBERT base the all-shared E = 128 row
    bert_base, albert_base = TABLE_2[0], TABLE_2[2]
    rows = {(r.table, r.config.sharing, r.config.E): r for r in TABLE_3_SCORES + TABLE_4_SCORES}
    for row in (rows[(3, "none", 768)], rows[(4, "none", 768)]):
        assert (row.squad11, row.squad20, row.mnli, row.sst2, row.race) == (
            bert_base.squad11, bert_base.squad20, bert_base.mnli, bert_base.sst2, bert_base.race)
    assert rows[(3, "all", 128)].average == rows[(4, "all", 128)].average == albert_base.average
    # two E = 128 cells print another MNLI figure in Table 4 than in Table 3, each Avg following its own
    assert (rows[(3, "all", 128)].mnli, rows[(4, "all", 128)].mnli) == (81.6, 82.0)
    assert (rows[(3, "none", 128)].mnli, rows[(4, "none", 128)].mnli) == (83.7, 83.2)
    assert (rows[(3, "none", 128)].average, rows[(4, "none", 128)].average) == (81.7, 81.6)


def test_what_the_paper_says_of_its_tables():
    # section 4.5: all-shared costs 1.5 Avg at E = 128 and 2.5 at E = 768; sharing attention +0.1 and -0.7
    rows = {(r.config.E, r.config.sharing): r.average for r in TABLE_4_SCORES}
    assert round(rows[(128, "all")] - rows[(128, "none")], 1) == -1.5
    assert round(rows[(768, "all")] - rows[(768, "none")], 1) == -2.5
    assert round(rows[(128, "attention")] - rows[(128, "none")], 1) == 0.1
    assert round(rows[(768, "attention")] - rows[(768, "none")], 1) == -0.7
    # most of the drop comes from sharing the FFN: at both E it scores below sharing attention
    assert all(rows[(E, "ffn")] < rows[(E, "attention")] for E in (128, 768))


def test_what_section_4_4_says_of_table_3():
    # "Under the non-shared condition (BERT-style), larger embedding sizes give better performance, but
    # not by much. Under the all-shared condition (ALBERT-style), an embedding of size 128 appears to be
    # the best."
    rows = {(r.config.sharing, r.config.E): r.average for r in TABLE_3_SCORES}
    widths = sorted({E for _, E in rows})
    not_shared = [rows["none", E] for E in widths]
    assert widths == [64, 128, 256, 768]
    assert all(a < b for a, b in zip(not_shared, not_shared[1:], strict=False))
    assert round(not_shared[-1] - not_shared[0], 1) == 1.0
    assert max(widths, key=lambda E: rows["all", E]) == 128
    # "we use an embedding size E = 128 in all future settings": every ALBERT model of Table 1
    assert {r.config.E for r in TABLE_1 if r.model.startswith("ALBERT")} == {128}


def test_pretraining_rows_are_the_papers_figures():
    assert [(r.model, r.preset, r.sentence_task, r.data_gb, r.batch, r.steps, r.millions,
             r.over_bert_millions) for r in PRETRAINING] == [
        ("BERT base", "bert-base", "NSP", 16, 256, 1_000_000, 110, None),
        ("ALBERT base", "albert-base-v2", "SOP", 16, 4096, 125_000, 12, None),
        ("RoBERTa base", "roberta-base", "none", 160, 8_000, 500_000, None, 15)]
    assert [r.sequences for r in PRETRAINING] == [256_000_000, 512_000_000, 4_000_000_000]
    assert ["static" in r.masking for r in PRETRAINING] == [True, False, False]
    assert ["dynamic" in r.masking for r in PRETRAINING] == [False, False, True]


def test_pretraining_agrees_with_the_papers_other_tables():
    bert, albert, roberta = PRETRAINING
    # ALBERT base: Table 1's figure; the recipe's batch and steps (section 4.1)
    assert albert.millions == next(r.millions for r in TABLE_1 if r.model == "ALBERT base")
    recipe = {item: text for item, text, _ in RECIPE}
    assert f"{albert.batch:,}" in recipe["batch"] and recipe["steps"] == f"{albert.steps:,}"
    # RoBERTa's Table 4: its last RoBERTa row (all data, 500K steps) has base's batch and steps (Table 9);
    # BERT's recipe is the BERT-large row's (Devlin et al. train both sizes alike); both data sets 16 GB
    longest, bert_large = roberta_paper.TABLE_4[3], roberta_paper.row("BERT-large with BOOKS + WIKI")
    assert (roberta.data_gb, roberta.batch, roberta.steps) == (longest.data_gb, longest.batch, longest.steps)
    assert (bert.batch, bert.steps) == (bert_large.batch, bert_large.steps)
    assert bert.data_gb == albert.data_gb == roberta_paper.TABLE_4[0].data_gb


def test_the_presets_are_the_papers_geometry():
    bert, albert, roberta = (r.config for r in PRETRAINING)
    table_1 = {r.model: r.config for r in TABLE_1}
    assert bert == table_1["BERT base"] and albert == table_1["ALBERT base"]
    assert (bert.E, albert.E, roberta.E) == (768, 128, 768) and roberta.E == roberta.hidden_size
    assert (bert.sharing, albert.sharing, roberta.sharing) == ("none", "all", "none")
    same = ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size")
    assert all(getattr(roberta, f) == getattr(bert, f) for f in same)  # RoBERTa base follows BERT base
    assert roberta.vocab_size == 50265  # a 50K byte-level BPE vocabulary (section 4.4)


def test_robertas_extra_parameters_are_its_vocabulary():
    # "adds approximately 15M ... for BERT base": the larger token table, nearly all of the difference
    bert, roberta = PRESETS["bert-base"], PRESETS["roberta-base"]
    extra = count_parameters(roberta).total - count_parameters(bert).total
    assert to_millions(extra) == PRETRAINING[2].over_bert_millions
    table = (roberta.vocab_size - bert.vocab_size) * bert.hidden_size
    assert abs(extra - table) < 0.001 * extra


def test_pretraining_table():
    lines = pretraining_table().splitlines()
    assert len(lines) == 2 + len(PRETRAINING)
    assert lines[0].startswith("| Model | E | Sharing | Sentence task | Masking | Data | Batch | Steps |")
    for line, row in zip(lines[2:], PRETRAINING, strict=True):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[0] == row.model and cells[1] == f"{row.config.E:,}" and cells[2] == row.config.sharing
        assert cells[6:8] == [f"{row.batch:,}", f"{row.steps:,}"]
        assert cells[-1] == f"{count_parameters(row.config, pooler=True).total:,}"
    assert [c.strip() for c in lines[-1].split("|")][-3] == "BERT base + about 15M"


@pytest.mark.parametrize("call, error, match", [
    (lambda: Accounting(pooler=1), TypeError, "pooler"),
    (lambda: Accounting(projection="sometimes"), ValueError, "projection"),
    (lambda: Accounting(vocab_size=0), ValueError, "vocab_size"),
    (lambda: to_millions(-1), ValueError, "count"),
    (lambda: to_millions(5, "banker"), ValueError, "rounding"),
    (lambda: reproducing([]), TypeError, "rows"),
    (lambda: extra_needed("BERT"), TypeError, "row"),
    (lambda: accountings([30000, "big"]), TypeError, "vocab_sizes"),
    (lambda: reproduces("plain", TABLE_1), TypeError, "accounting"),
    (lambda: reproduces(PLAIN, TABLE_1, "sideways"), ValueError, "rounding"),
    (lambda: largest_count(None), TypeError, "rows"),
    (lambda: markdown_table(TABLE_1, {"plain": "encoder"}), TypeError, "columns"),
    (lambda: markdown_table("TABLE_1", {"plain": PLAIN}), TypeError, "rows"),
    (lambda: pretraining_table("PRETRAINING"), TypeError, "rows"),
    (lambda: pretraining_table([]), TypeError, "rows"),
    (lambda: pretraining_table(TABLE_1), TypeError, "Pretraining"),
])
def test_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_berts_table_8_rows_are_shares_of_the_selected_tokens():
    from geron_lib.studies.paper import BERT_TABLE_8

    assert len(BERT_TABLE_8) == 6
    for r in BERT_TABLE_8:
        assert r.mask + r.same + r.random == pytest.approx(1.0)
    # BERT's own rule first; always [MASK] the worst with frozen features; fine-tuned MNLI within 0.8 points
    assert (BERT_TABLE_8[0].mask, BERT_TABLE_8[0].same, BERT_TABLE_8[0].random) == (0.8, 0.1, 0.1)
    assert min(BERT_TABLE_8, key=lambda r: r.ner_feature).mask == 1.0
    assert max(r.mnli for r in BERT_TABLE_8) - min(r.mnli for r in BERT_TABLE_8) == pytest.approx(0.8)


def test_chance_of_a_fit_counts_the_readings_and_is_seeded():
    from geron_lib.studies.paper import ROUNDINGS, chance_of_a_fit, distinct_fits

    column = [row for row in TABLE_3 if row.config.sharing == "all"]
    fits = distinct_fits(column)
    assert fits.shape[1] == 4 and len(fits) <= len(accountings()) * len(ROUNDINGS)
    # the published column is one of the readings (encoder + pooler, nearest)
    assert [row.millions for row in column] in fits.tolist()
    rate = chance_of_a_fit(column, spread=1, trials=5000, seed=0)
    assert rate == chance_of_a_fit(column, spread=1, trials=5000, seed=0)
    # at most K of the 3^4 equally likely tables can fit: the rate is near K / 81
    assert abs(rate - len(fits) / 3**4) < 0.03
    # spread 0: the one table is the plain count rounded, which the plain accounting reproduces
    assert chance_of_a_fit(column, spread=0, trials=10) == 1.0
    # a whole table is much harder to fit by chance than one column
    assert chance_of_a_fit(TABLE_3, spread=1, trials=5000) < rate / 10
    with pytest.raises(ValueError):
        chance_of_a_fit(column, spread=-1)
