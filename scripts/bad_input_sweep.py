"""Run every rule test of tests/bad_inputs/test_rules_*.py, each row in a forked child with a time limit and
a measure of its peak memory, and count what happened.

    python scripts/bad_input_sweep.py [--time-limit S] [--memory-limit MIB] [--module GLOB] [-k EXPRESSION]

The rows are collected by pytest (with their fixtures, built in this process before the child forks); a row's
id is ``entry / label`` (tests/bad_inputs/outcome.py). Its outcome (see :func:`outcome` and :func:`classify`):
    clear error          it raised the exception the row names, its message holding every name the row lists
    right answer         it returned, and the test's checks passed
    traceback            the library raised another exception, or the right one without the names
    silent wrong answer  it returned where an error was due, or a check of the test refused the value
    hang                 it ran past the time limit (the child is killed)
    huge allocation      its peak (tracemalloc, which numpy reports to) passed the memory limit
    crash                the child died without reporting (a segfault, os._exit)

Prints the counts per entry, the totals and the median time to refuse; exits 1 if any row is a defect
(anything but a clear error or a right answer) or pytest failed otherwise (a fixture that could not be set
up).
"""

from __future__ import annotations

import argparse
import inspect
import os
import pickle
import re
import signal
import statistics
import sys
import time
import traceback
import tracemalloc
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RULES_DIR = ROOT / "tests" / "bad_inputs"
sys.path[:0] = [p for p in (str(ROOT), str(ROOT / "tests")) if p not in sys.path]

from bad_inputs.outcome import REFUSALS, SWEPT, NotRefused, UnclearRefusal, WrongRefusal  # noqa: E402

CLEAR, RIGHT = "clear error", "right answer"
TRACEBACK, SILENT, HANG, HUGE, CRASH = "traceback", "silent wrong answer", "hang", "huge allocation", "crash"
KINDS = (CLEAR, RIGHT, TRACEBACK, SILENT, HANG, HUGE, CRASH)
DEFECTS = KINDS[2:]

#: Defaults: seconds a row may run, and the peak a row may allocate.
TIME_LIMIT = 10.0
MEMORY_LIMIT_MIB = 64


#: The rule a refusal's message states, by the first pattern it matches (for the README's table): how a value
#: is read first (masks, weights, presets, exact numbers, dtypes, files, torch, a named cause), then its rule.
RULES = (
    ("a masked array (numpy's min and max skip what its arithmetic reads)", r"masked array"),
    ("NaN or infinity in weights, logits or gradients, at load and construction",
     r"(arrays|state_dict|embeddings|attention|ffn|pooler|grads)\[[^]]*\] must be finite|"
     r"(logits|d_hidden) must be finite"),
    ("a preset or its config written to (both read-only)", r"mappingproxy|cannot assign to field"),
    ("a number read through its own methods, or no number at all (a timedelta64)",
     r"duration, not a number|__index__ or __float__"),
    ("a dtype that cannot hold a value, or arrays of another dtype",
     r"smallest normal|but dtype is|one dtype"),
    ("a file that cannot be read, or files that do not belong together",
     r"\.npz|UTF-8|no stored|come from one|special tokens|JSON"),
    ("a torch tensor numpy cannot read, or a device this torch lacks",
     r"torch tensor|this build of torch|torch device"),
    ("a cause another message would misname (a query that attends to nothing, targets of a list, a training "
     "step through an NSP head without its pooler)",
     r"attends to nothing|numpy integer array; got|needs the pooler"),
    ("keyword-only: an argument whose order differs from transformers'", r"positional argument"),
    ("a size whose memory, estimated first, passes the limit", r"GiB|MEMORY_LIMIT"),
    ("NaN or infinity", r"finite|NaN|infinit"),
    ("a name or dtype not among the choices", r"must be one of|float32 or float64"),
    ("a wrong type (a bool or float for a count, a string, None, a list for an array)",
     r"must be (an integer|a real number|True or False|an? [A-Z]\w*|a numpy|a float|a dict|a str|a list|"
     r"a function|a mapping|a pair|a non-empty dict)|must hold (real|integers|floats)|integer array|booleans|"
     r"got (str|NoneType|list|int|tuple|dict)\b|must be str\b"),
    ("token ids or labels outside their table (negative, past vocab_size, not whole; no -100)",
     r"token ids|vocab_size|negative|whole number|ignore index"),
    ("a wrong shape (empty, ragged, other dimensions)", r"shape|dimensions|empty|ragged|\(B, T|per row"),
    ("a number out of its range (zero, negative, past a limit, not dividing)",
     r"at least|at most|must lie|divisible|must exceed|positive|in \[|beyond|positions, above|0 or 1|below"),
)
OTHER_RULE = "arguments that contradict each other or the config, or a malformed value"


def rule_of(message: str) -> str:
    """The rule of :data:`RULES` that a refusal's message states, else :data:`OTHER_RULE`."""
    return next((rule for rule, pattern in RULES if re.search(pattern, message)), OTHER_RULE)


@dataclass(frozen=True)
class Case:
    """One row: the entry and label of its id, and its test function with the arguments pytest gave it."""

    entry: str
    label: str
    test: object
    arguments: dict


@dataclass(frozen=True)
class Run:
    """What one child reported: its ``outcome`` (one of CLEAR, RIGHT, TRACEBACK, SILENT) and ``message`` (the
    refusal's, or the failure's), or no outcome (``timed_out``, or a crash); its time and peak."""

    outcome: str | None = None
    message: str = ""
    seconds: float = 0.0
    peak_bytes: int = 0
    timed_out: bool = False


def outcome(test, arguments: dict) -> tuple[str, str]:
    """(outcome, message) of ``test(**arguments)``: a refusal ``refused`` accepted is a clear error, a test
    that passes otherwise a right answer; an exception raised by the tests' own code (a check that failed or
    could not read the value) a silent wrong answer, one raised by the library a traceback."""
    REFUSALS.clear()
    try:
        test(**arguments)
    except (UnclearRefusal, WrongRefusal) as err:
        return TRACEBACK, str(err)
    except NotRefused as err:
        return SILENT, str(err)
    except Exception as err:  # the outcome being measured
        where = Path(traceback.extract_tb(err.__traceback__)[-1].filename).resolve()
        return (SILENT if RULES_DIR in where.parents else TRACEBACK), f"{type(err).__name__}: {err}"
    return (CLEAR, REFUSALS[-1]) if REFUSALS else (RIGHT, "")


def classify(run: Run, memory_limit_bytes: int) -> str:
    """The outcome of a row given the child's report ``run`` (one of :data:`KINDS`)."""
    if run.timed_out:
        return HANG
    if run.outcome is None:
        return CRASH
    if run.peak_bytes > memory_limit_bytes:
        return HUGE
    return run.outcome


def _child(test, arguments: dict, write_fd: int) -> None:
    """Run the row and write its report to ``write_fd`` (in the forked child)."""
    tracemalloc.start()
    start = time.perf_counter()
    kind, message = outcome(test, arguments)
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    with os.fdopen(write_fd, "wb") as out:
        out.write(pickle.dumps(Run(kind, message, seconds, peak)))


def run_case(test, arguments: dict, time_limit: float = TIME_LIMIT) -> Run:
    """``test(**arguments)`` run in a forked child, killed after ``time_limit`` seconds."""
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_fd)
        code = 0
        try:
            _child(test, arguments, write_fd)
        except BaseException:  # noqa: BLE001 - whatever happens, the child must not return into the parent's code
            code = 1
        os._exit(code)
    os.close(write_fd)
    os.set_blocking(read_fd, False)
    chunks, deadline, done = [], time.monotonic() + time_limit, False
    while True:
        try:
            chunk = os.read(read_fd, 1 << 16)
        except BlockingIOError:
            chunk = None
        if chunk:
            chunks.append(chunk)
        elif chunk == b"":  # the child closed its end: finished (or died)
            done = True
            break
        if time.monotonic() > deadline:
            break
        time.sleep(0.002)
    os.close(read_fd)
    if not done:
        os.kill(pid, signal.SIGKILL)  # a hang inside BLAS or LAPACK ignores gentler signals
        os.waitpid(pid, 0)
        return Run(timed_out=True, seconds=time_limit)
    os.waitpid(pid, 0)
    try:
        return pickle.loads(b"".join(chunks))
    except Exception:  # the child died before its report was whole
        return Run()


class Sweep:
    """A pytest plugin: runs each test as :func:`run_case` does instead of in this process, and keeps
    (case, outcome, report) for every row; a defect fails the test."""

    def __init__(self, time_limit: float, memory_limit_bytes: int):
        self.time_limit, self.memory_limit_bytes, self.results = time_limit, memory_limit_bytes, []

    def pytest_configure(self, config):
        config.stash[SWEPT] = True

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        for item in items:  # the child's limit decides what is a hang; pytest's only guards this process
            item.add_marker(pytest.mark.timeout(self.time_limit + 60), append=False)

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem):
        test = pyfuncitem.obj
        arguments = {name: pyfuncitem.funcargs[name] for name in inspect.signature(test).parameters}
        callspec = getattr(pyfuncitem, "callspec", None)  # a test of no table is an entry of its own name
        entry, _, label = callspec.id.partition(" / ") if callspec else (pyfuncitem.name, "", "")
        run = run_case(test, arguments, self.time_limit)
        kind = classify(run, self.memory_limit_bytes)
        self.results.append((Case(entry, label, test, arguments), kind, run))
        if kind in DEFECTS:
            pytest.fail(f"{kind}: {run.message}", pytrace=False)
        return True


def rule_files(pattern: str = "*") -> list[Path]:
    """The rule tests' files: ``tests/bad_inputs/test_rules_<pattern>.py``."""
    return sorted(RULES_DIR.glob(f"test_rules_{pattern}.py"))


def sweep(paths, time_limit: float = TIME_LIMIT, memory_limit_bytes: int = MEMORY_LIMIT_MIB * 2**20,
          pytest_args=()) -> tuple[list[tuple[Case, str, Run]], int]:
    """(case, outcome, report) for every row of the rule tests in ``paths``, run one after another, and
    pytest's exit status (not 0 also when a row failed outside the child, or a test could not be set up)."""
    plugin = Sweep(time_limit, memory_limit_bytes)
    status = pytest.main(["-q", "-p", "no:cacheprovider", "--no-header", *pytest_args,
                          *map(str, paths)], plugins=[plugin])
    return plugin.results, int(status)


def report(results) -> str:
    """The counts per entry and in all, the median time to refuse, and every defect by name."""
    by_entry = defaultdict(Counter)
    for case, kind, _ in results:
        by_entry[case.entry][kind] += 1
    shown = [k for k in KINDS if k in (CLEAR, RIGHT) or any(c[k] for c in by_entry.values())]
    width = max([len("entry"), *map(len, by_entry)])
    lines = [f"{'entry':<{width}}  " + "  ".join(f"{k:>{len(k)}}" for k in shown) + "  median refusal"]
    refusal_ms = defaultdict(list)
    for case, kind, run in results:
        if kind == CLEAR:
            refusal_ms[case.entry].append(1e3 * run.seconds)
    for entry in sorted(by_entry):
        times = refusal_ms[entry]
        median = f"{statistics.median(times):.3f} ms" if times else "-"
        lines.append(f"{entry:<{width}}  " + "  ".join(f"{by_entry[entry][k]:>{len(k)}}" for k in shown)
                     + f"  {median:>14}")
    by_rule = defaultdict(list)
    for _, kind, run in results:
        if kind == CLEAR:
            by_rule[rule_of(run.message)].append(1e3 * run.seconds)
    lines.append("")
    rule_width = max(len(r) for r in by_rule) if by_rule else 0
    lines.append(f"{'refused because of':<{rule_width}}  count  median refusal")
    for rule in [r for r, _ in RULES] + [OTHER_RULE]:
        if by_rule[rule]:
            lines.append(f"{rule:<{rule_width}}  {len(by_rule[rule]):>5}  "
                         f"{statistics.median(by_rule[rule]):>11.3f} ms")
    totals = Counter(kind for _, kind, _ in results)
    all_refusals = [t for times in refusal_ms.values() for t in times]
    lines.append("")
    lines.append(f"inputs tried: {len(results)}; " + ", ".join(f"{k}: {totals[k]}" for k in KINDS))
    if all_refusals:
        slowest = max(((run.seconds, case) for case, kind, run in results if kind == CLEAR),
                      key=lambda r: r[0])
        lines.append(f"median time to refuse: {statistics.median(all_refusals):.3f} ms "
                     f"(max {1e3 * slowest[0]:.1f} ms: {slowest[1].entry} / {slowest[1].label}) "
                     f"over {len(all_refusals)} clear errors")
    for case, kind, run in results:
        if kind in DEFECTS:
            lines.append(f"DEFECT {kind}: {case.entry} / {case.label}"
                         f" ({run.peak_bytes / 2**20:.1f} MiB, {run.seconds:.2f} s) {run.message}"[:400])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT, help="seconds a row may run")
    parser.add_argument("--memory-limit", type=float, default=MEMORY_LIMIT_MIB,
                        help="MiB a row may allocate")
    parser.add_argument("--module", default="*", help="only tests/bad_inputs/test_rules_MODULE.py (a glob)")
    parser.add_argument("-k", dest="keyword", help="only the rows pytest -k selects")
    args = parser.parse_args(argv)
    results, status = sweep(rule_files(args.module), args.time_limit, int(args.memory_limit * 2**20),
                            ["-k", args.keyword] if args.keyword else [])
    print(report(results))
    return 1 if status or not results or any(kind in DEFECTS for _, kind, _ in results) else 0


if __name__ == "__main__":
    sys.exit(main())
