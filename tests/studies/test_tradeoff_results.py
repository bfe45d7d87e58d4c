"""Reading the stored trade-off grid for the chapter's comparisons, on small grids written by hand:
smoothness, per-seed values, paired comparisons (Table 3 then Table 4), late improvement, task summaries."""

import copy

import numpy as np
import pytest

from geron_lib.studies.paired import paired_interval
from geron_lib.studies.tradeoffs import results as tr

H = 8
SEEDS = (0, 1, 2)
# the cells a grid with embedding_sizes (2, 4, 8) and mode_embedding_sizes (8, 4) trains, H = 8
CELLS = [(2, "none"), (4, "none"), (8, "none"), (2, "all"), (4, "all"), (8, "all"),
         (8, "attention"), (8, "ffn"), (4, "attention"), (4, "ffn")]
STEPS = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]


def loss_curve(i: int, seed: int) -> list[float]:
    """Cell i's held-out loss at STEPS: falling from 9, ending at 5 + i / 10 + seed^2 / 100."""
    end = 5 + i / 10 + seed**2 / 100
    return [round(end + (9 - end) * (1 - k / 9) ** 2, 6) for k in range(10)]


def fake_grid() -> dict:
    runs, tuned = [], []
    for seed in SEEDS:
        for i, (E, sharing) in enumerate(CELLS):
            runs.append({"E": E, "sharing": sharing, "seed": seed, "held_out_loss": loss_curve(i, seed),
                         "held_out_step": STEPS, "parameters": 1000 * (i + 1),
                         "effective_rank_moved_centred": 1.5 + i + seed / 10,
                         "movement_distance": [1.0, 2.0 + i, 2.0 + i + seed, 1.0]})
            for task, base in (("order", 0.5), ("section", 0.3)):
                tuned.append({"E": E, "sharing": sharing, "seed": seed, "task": task,
                              "accuracy": base + i / 100 + seed * (i % 3) / 1000, "train_loss": [1.0, 0.5]})
    return {"setup": {"hidden_size": H, "embedding_sizes": [2, 4, 8], "mode_embedding_sizes": [8, 4],
                      "seeds": list(SEEDS)},
            "tasks": {"order": {"classes": ["in order", "swapped"]}, "section": {"classes": ["a", "b", "c"]}},
            "runs": runs, "finetuning": tuned}


GRID = fake_grid()


def test_smoothness_by_hand():
    assert tr.smoothness([1.0, 3.0, 2.0, 2.0]) == pytest.approx((2 + 1 + 0) / 3)
    assert tr.smoothness([4.0, 4.0, 4.0]) == 0.0  # equal steps: no jump
    assert tr.smoothness(np.array([0.5, 1.5])) == pytest.approx(1.0)
    for bad in ([1.0], [[1.0, 2.0], [3.0, 4.0]], []):
        with pytest.raises(ValueError, match="distances must be 1-D with one value per layer, at least 2"):
            tr.smoothness(bad)


def test_per_seed_reads_each_kind_of_measure():
    i = CELLS.index((4, "all"))
    assert tr.per_seed(GRID, "held_out_loss", (4, "all")) == {s: loss_curve(i, s)[-1] for s in SEEDS}
    assert tr.per_seed(GRID, "effective_rank_moved_centred", (4, "all")) == {0: 5.5, 1: 5.6, 2: 5.7}
    assert tr.per_seed(GRID, "parameters", [4, "all"]) == {0: 5000, 1: 5000, 2: 5000}  # a JSON list cell
    # distances [1, 2 + i, 2 + i + seed, 1]: jumps 1 + i, seed and 1 + i + seed, over three
    assert tr.per_seed(GRID, "smoothness", (4, "all")) == pytest.approx(
        {s: (1 + i + s + 1 + i + s) / 3 for s in SEEDS})
    assert tr.per_seed(GRID, "accuracy:section", (4, "all")) == pytest.approx(
        {s: 0.3 + i / 100 + s * (i % 3) / 1000 for s in SEEDS})
    assert tr.per_seed(GRID, "accuracy:order", (2, "none"))[2] == pytest.approx(0.5)


def test_compare_is_the_paired_interval_of_the_seeds_values():
    got = tr.compare(GRID, "held_out_loss", (2, "none"), (8, "none"))
    a = [r["held_out_loss"][-1] for r in GRID["runs"] if (r["E"], r["sharing"]) == (2, "none")]
    b = [r["held_out_loss"][-1] for r in GRID["runs"] if (r["E"], r["sharing"]) == (8, "none")]
    assert got == paired_interval(a, b)
    assert got.mean == pytest.approx((0 - 2) / 10) and got.n == 3  # cells 0 and 2: ends 5.0 and 5.2
    assert got.low == pytest.approx(got.high) == pytest.approx(-0.2)  # the seed adds alike to both
    acc = tr.compare(GRID, "accuracy:order", (8, "ffn"), (8, "none"))
    a, b = ([r["accuracy"] for r in GRID["finetuning"]
             if (r["E"], r["sharing"], r["task"]) == (8, sharing, "order")] for sharing in ("ffn", "none"))
    assert acc == paired_interval(a, b) and acc.low < acc.mean < acc.high


def test_compare_pairs_seed_by_seed_and_refuses_unpaired_seeds():
    shuffled = copy.deepcopy(GRID)
    shuffled["runs"].reverse()  # pairs go by seed, not by position
    assert tr.compare(shuffled, "held_out_loss", (4, "ffn"), (4, "none")) == tr.compare(
        GRID, "held_out_loss", (4, "ffn"), (4, "none"))
    short = copy.deepcopy(GRID)
    short["runs"] = [r for r in short["runs"] if (r["E"], r["sharing"], r["seed"]) != (4, "ffn", 1)]
    with pytest.raises(ValueError, match=r"cell \(4, 'ffn'\) has seeds \[0, 2\] but baseline \(4, 'none'\) "
                                         r"has \[0, 1, 2\]: a paired comparison needs the same seeds"):
        tr.compare(short, "held_out_loss", (4, "ffn"), (4, "none"))


def test_comparisons_are_table_3_then_table_4_for_every_measure():
    got = tr.comparisons(GRID, measures=("held_out_loss",))
    assert [(c.table, c.cell, c.baseline) for c in got] == [
        ("3", (2, "none"), (8, "none")), ("3", (4, "none"), (8, "none")),
        ("3", (2, "all"), (8, "all")), ("3", (4, "all"), (8, "all")),
        ("4", (8, "all"), (8, "none")), ("4", (8, "attention"), (8, "none")), ("4", (8, "ffn"), (8, "none")),
        ("4", (4, "all"), (4, "none")), ("4", (4, "attention"), (4, "none")), ("4", (4, "ffn"), (4, "none"))]
    for c in got:
        assert c.measure == "held_out_loss"
        assert c.interval == tr.compare(GRID, "held_out_loss", c.cell, c.baseline)
    default = tr.comparisons(GRID)
    measures = ("held_out_loss", "accuracy:order", "accuracy:section")
    assert [c.measure for c in default] == [m for m in measures for _ in got]
    pairs = [(c.table, c.cell, c.baseline) for c in got]
    assert [(c.table, c.cell, c.baseline) for c in default] == pairs * 3
    section = default[-1]  # (4, ffn) against (4, none): cells 9 and 1
    assert section.interval.mean == pytest.approx(np.mean([8 / 100 + s * (0 - 1) / 1000 for s in SEEDS]))


def test_late_improvement_by_hand():
    i = CELLS.index((8, "ffn"))
    # the last 20 % of 100 steps starts nearest step 80: the eighth evaluation
    assert tr.late_improvement(GRID, (8, "ffn")) == pytest.approx(
        {s: loss_curve(i, s)[7] - loss_curve(i, s)[9] for s in SEEDS})
    # the last third: nearest step 67 is 70, the seventh
    assert tr.late_improvement(GRID, (8, "ffn"), share=1 / 3)[1] == pytest.approx(
        loss_curve(i, 1)[6] - loss_curve(i, 1)[9])
    assert all(v > 0 for v in tr.late_improvement(GRID, (2, "all"), share=0.5).values())  # still falling


def test_task_summary_and_seeds_of():
    summary = tr.task_summary(GRID, "order")
    assert set(summary) == set(CELLS)
    i = CELLS.index((2, "all"))  # i % 3 == 0: every seed alike
    assert summary[(2, "all")] == pytest.approx((0.5 + i / 100,) * 3)
    i = CELLS.index((4, "none"))  # i % 3 == 1: seeds add 0, 0.001, 0.002
    base = 0.5 + i / 100
    assert summary[(4, "none")] == pytest.approx((base + 0.001, base, base + 0.002))
    assert tr.seeds_of(GRID) == 3
    short = copy.deepcopy(GRID)
    short["runs"].pop()
    with pytest.raises(ValueError, match="unequal numbers of seeds"):
        tr.seeds_of(short)


@pytest.mark.parametrize("call, error, match", [
    (lambda g: tr.per_seed(g, "perplexity", (8, "none")), ValueError,
     "measure 'perplexity' is not a key of the stored runs, 'smoothness' or 'accuracy:<task>'"),
    (lambda g: tr.per_seed(g, "accuracy:topic", (8, "none")), ValueError,
     "the task of accuracy:<task> must be one of 'order', 'section'; got 'topic'"),
    (lambda g: tr.per_seed(g, 3, (8, "none")), TypeError, "measure must be a str"),
    (lambda g: tr.per_seed(g, "held_out_loss", (16, "none")), ValueError,
     r"the grid has no 'held_out_loss' for cell \(16, 'none'\)"),
    (lambda g: tr.per_seed(g, "accuracy:order", (2, "ffn")), ValueError,
     r"the grid has no 'accuracy:order' for cell \(2, 'ffn'\)"),
    (lambda g: tr.per_seed(g, "held_out_loss", 8), ValueError, r"cell must be an \(E, sharing\) pair, got 8"),
    (lambda g: tr.compare(g, "held_out_loss", (8, "all"), "none"), ValueError,
     r"baseline must be an \(E, sharing\) pair, got 'none'"),
    (lambda g: tr.compare(g, "held_out_loss", (8, "all"), (32, "none")), ValueError,
     r"the grid has no 'held_out_loss' for cell \(32, 'none'\)"),
    (lambda g: tr.late_improvement(g, (2, "ffn")), ValueError, r"the grid has no run of cell \(2, 'ffn'\)"),
    (lambda g: tr.late_improvement(g, (8, "all"), share=0), ValueError, r"share must lie in \(0, 1\), got 0"),
    (lambda g: tr.late_improvement(g, (8, "all"), share=1.0), ValueError, r"share must lie in \(0, 1\)"),
    (lambda g: tr.late_improvement(g, (8, "all"), share="0.2"), TypeError, "share must be a real number"),
    (lambda g: tr.task_summary(g, "topic"), ValueError, "task must be one of 'order', 'section'"),
])
def test_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call(GRID)


@pytest.mark.parametrize("not_a_grid", [[], {}, {"runs": [], "finetuning": []},
                                        {"runs": GRID["runs"]},  # no fine-tuning: an old-format grid
                                        "tradeoffs.json"])
@pytest.mark.parametrize("read", [
    lambda g: tr.per_seed(g, "held_out_loss", (8, "none")),
    lambda g: tr.comparisons(g),
    lambda g: tr.late_improvement(g, (8, "none")),
    lambda g: tr.task_summary(g, "order"),
    tr.seeds_of,
])
def test_refuses_what_is_not_a_stored_grid(not_a_grid, read):
    with pytest.raises(TypeError, match="result must be a stored grid as load_stored"):
        read(not_a_grid)
