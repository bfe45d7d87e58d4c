"""The sweep's classifier on synthetic cases of every kind, so that its counts can be trusted."""

import importlib
import os
import time

import numpy as np
import pytest

from bad_inputs import load_sweep
from bad_inputs.case import Case

sweep = load_sweep()


def refuse():
    raise ValueError("size must be at least 1, got 0")


def sleep():
    time.sleep(30)


def allocate_and_refuse():
    big = np.ones(8 * 2**20)  # 64 MiB
    raise ValueError(f"size must be at most {big.size}")


SYNTHETIC = [
    (Case("e", "clear", refuse, raises=ValueError, names=("size", "at least 1")), sweep.CLEAR),
    (Case("e", "right", lambda: 4, expect=lambda v: v == 4), sweep.RIGHT),
    (Case("e", "names missing", refuse, raises=ValueError, names=("count",)), sweep.TRACEBACK),
    (Case("e", "wrong type", lambda: {}["k"], raises=ValueError, names=("k",)), sweep.TRACEBACK),
    (Case("e", "raised where a value was due", refuse, expect=lambda v: True), sweep.TRACEBACK),
    (Case("e", "returned where an error was due", lambda: 4, raises=ValueError, names=()), sweep.SILENT),
    (Case("e", "a wrong value", lambda: 5, expect=lambda v: v == 4), sweep.SILENT),
    (Case("e", "an expect that cannot read the value", lambda: None, expect=lambda v: v[0] == 1),
     sweep.SILENT),
    (Case("e", "sleeps past the limit", sleep, raises=ValueError, names=()), sweep.HANG),
    (Case("e", "allocates, then refuses", allocate_and_refuse, raises=ValueError, names=("size",)),
     sweep.HUGE),
    (Case("e", "the child dies", lambda: os._exit(3), expect=lambda v: True), sweep.CRASH),
]


@pytest.mark.parametrize("case, kind", SYNTHETIC, ids=[c.label for c, _ in SYNTHETIC])
def test_classify(case, kind):
    start = time.monotonic()
    run = sweep.run_case(case, time_limit=1.0)
    assert sweep.classify(case, run, 16 * 2**20) == kind
    assert time.monotonic() - start < 5  # a hang is cut at the limit


def test_report_counts_and_names_the_defects():
    results = sweep.sweep([c for c, _ in SYNTHETIC[:3]], time_limit=2.0, memory_limit_bytes=16 * 2**20)
    text = sweep.report(results)
    assert "inputs tried: 3; clear error: 1, right answer: 1, traceback: 1" in text
    assert "DEFECT traceback: e / names missing" in text
    assert "median time to refuse" in text


@pytest.mark.parametrize("message, rule", [
    ("Encoder.__call__() takes 2 positional arguments but 3 were given", sweep.RULES[0][0]),
    ("a forward pass on 1000000 x 16 ids would need 5.2 GiB, above the limit", sweep.RULES[1][0]),
    ("lr must be finite, got nan", sweep.RULES[2][0]),
    ("seed must be an integer, got 1.5 (float)", sweep.RULES[4][0]),
    ("MaskedBatch's labels must hold the original token ids, each at least 0; found -100", sweep.RULES[5][0]),
    ("seq_len must be at least 1, got 0", sweep.RULES[7][0]),
    ("nsp_head reads the pooled output: set pooler=True", sweep.OTHER_RULE),
])
def test_rule_of_a_message(message, rule):
    assert sweep.rule_of(message) == rule


def test_every_cases_module_is_found():
    names = {p.stem for p in sweep.CASES_DIR.glob("cases_*.py")}
    expected = sum(len(importlib.import_module(f"bad_inputs.{n}").CASES) for n in names)
    assert len(sweep.load_cases()) == expected

