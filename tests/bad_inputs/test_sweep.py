"""The sweep's classifier on synthetic rows of every kind, run in a child as the sweep runs the rule tests,
so that its counts can be trusted. The synthetic "library" is geron_lib.validate's check_int."""

import os
import time

import numpy as np
import pytest

from bad_inputs import load_sweep
from bad_inputs.outcome import refused
from geron_lib.validate import check_int

sweep = load_sweep()


def clear():
    with refused(ValueError, "size", "at least 1"):
        check_int("size", 0, minimum=1)


def right():
    assert check_int("size", 4) == 4


def names_missing():
    with refused(ValueError, "count"):
        check_int("size", 0, minimum=1)


def wrong_type():
    with refused(ValueError, "k"):
        check_int("size", "k")


def raised_where_a_value_was_due():
    assert check_int("size", 0, minimum=1) == 0


def returned_where_an_error_was_due():
    with refused(ValueError, "size"):
        check_int("size", 4, minimum=1)


def a_wrong_value():
    assert check_int("size", 5) == 4


def a_check_that_cannot_read_the_value():
    assert check_int("size", 5)[0] == 1


def sleeps():
    time.sleep(30)


def allocates_then_refuses():
    big = np.ones(8 * 2**20)  # 64 MiB
    with refused(ValueError, "size"):
        check_int("size", big.size, maximum=1)


def dies():
    os._exit(3)


SYNTHETIC = [
    ("clear", clear, sweep.CLEAR), ("right", right, sweep.RIGHT),
    ("names missing", names_missing, sweep.TRACEBACK), ("wrong type", wrong_type, sweep.TRACEBACK),
    ("raised where a value was due", raised_where_a_value_was_due, sweep.TRACEBACK),
    ("returned where an error was due", returned_where_an_error_was_due, sweep.SILENT),
    ("a wrong value", a_wrong_value, sweep.SILENT),
    ("a check that cannot read the value", a_check_that_cannot_read_the_value, sweep.SILENT),
    ("sleeps past the limit", sleeps, sweep.HANG),
    ("allocates, then refuses", allocates_then_refuses, sweep.HUGE), ("the child dies", dies, sweep.CRASH),
]


@pytest.mark.parametrize(("test", "kind"), [pytest.param(t, k, id=label) for label, t, k in SYNTHETIC])
def test_classify(test, kind):
    start = time.monotonic()
    run = sweep.run_case(test, {}, time_limit=1.0)
    assert sweep.classify(run, 16 * 2**20) == kind
    assert time.monotonic() - start < 5  # a hang is cut at the limit


def test_report_counts_and_names_the_defects():
    results = [(sweep.Case("e", label, test, {}), sweep.classify(run, 16 * 2**20), run)
               for label, test, _ in SYNTHETIC[:3] for run in [sweep.run_case(test, {}, time_limit=2.0)]]
    text = sweep.report(results)
    assert "inputs tried: 3; clear error: 1, right answer: 1, traceback: 1" in text
    assert "DEFECT traceback: e / names missing" in text
    assert "median time to refuse" in text


def rule(start: str) -> str:
    """The rule of the sweep's table that is ``start``, else the one that starts with it."""
    (found,) = [r for r, _ in sweep.RULES if r == start] or [r for r, _ in sweep.RULES if r.startswith(start)]
    return found


@pytest.mark.parametrize("message, start", [
    ("Encoder.__call__() takes 2 positional arguments but 3 were given", "keyword-only"),
    ("a forward pass on 1000000 x 16 ids would need 5.2 GiB, above the limit", "a size whose memory"),
    ("lr must be finite, got nan", "NaN or infinity"),
    ("seed must be an integer, got 1.5 (float)", "a wrong type"),
    ("MaskedBatch's labels must hold the original token ids, each at least 0; found -100", "token ids"),
    ("seq_len must be at least 1, got 0", "a number out of its range"),
    ("input_ids must be a plain numpy array, got a masked array: ...", "a masked array"),
    ("arrays['ffn.0.W_1'] must be finite: it holds NaN or infinity", "NaN or infinity in weights"),
    ("d_hidden must be finite: it holds NaN or infinity", "NaN or infinity in weights"),
    ("'mappingproxy' object does not support item assignment", "a preset"),
    ("seed must be an integer, got np.timedelta64(3) (numpy.timedelta64: a duration, not a number)",
     "a number read through"),
    ("config.layer_norm_eps (1e-300) must be at least the smallest normal float32 (1.18e-38)", "a dtype"),
    ("/tmp/w.npz is not a readable .npz archive of arrays (File is not a zip file)", "a file"),
    ("state_dict['x'] is a torch tensor that numpy cannot read (NotImplementedError: ...)", "a torch tensor"),
    ("additive_mask holds -inf for every key of a row: that query attends to nothing", "a cause"),
    ("training through nsp_head needs the pooler it reads (the pooled output): set pooler=True", "a cause"),
])
def test_rule_of_a_message(message, start):
    assert sweep.rule_of(message) == rule(start)


def test_a_message_of_no_rule_is_of_the_other_rule():
    assert sweep.rule_of("masked is the number of positions the MLM head predicts: set mlm_head=True") \
        == sweep.OTHER_RULE


def test_every_rule_file_is_swept():
    here = {p.name for p in sweep.RULES_DIR.glob("test_*.py")}
    swept = {p.name for p in sweep.rule_files()}
    assert swept == {name for name in here if name.startswith("test_rules_")} and len(swept) >= 7
