"""Run every bad-input case of tests/bad_inputs/cases_*.py, each in a forked child with a time limit and a
measure of its peak memory, and count what happened.

    python scripts/bad_input_sweep.py [--time-limit S] [--memory-limit MIB] [--module GLOB] [--entry TEXT]

A case's outcome (see :func:`classify`):
    clear error          it raised the exception the case names, its message holding every name the case lists
    right answer         it returned a value the case's ``expect`` accepts
    traceback            another exception, or the right one without the names in its message
    silent wrong answer  it returned where an error was due, or a value ``expect`` refuses
    hang                 it ran past the time limit (the child is killed)
    huge allocation      its peak (tracemalloc, which numpy reports to) passed the memory limit
    crash                the child died without reporting (a segfault, os._exit)

Prints the counts per entry, the totals and the median time to refuse; exits 1 if any case is a defect
(anything but a clear error or a right answer).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import pickle
import re
import signal
import statistics
import sys
import time
import tracemalloc
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES_DIR = ROOT / "tests" / "bad_inputs"

CLEAR, RIGHT = "clear error", "right answer"
TRACEBACK, SILENT, HANG, HUGE, CRASH = "traceback", "silent wrong answer", "hang", "huge allocation", "crash"
KINDS = (CLEAR, RIGHT, TRACEBACK, SILENT, HANG, HUGE, CRASH)
DEFECTS = KINDS[2:]

#: Defaults: seconds a case may run, and the peak a case may allocate.
TIME_LIMIT = 10.0
MEMORY_LIMIT_MIB = 64


#: The rule a refusal's message states, by the first pattern it matches (for the README's table).
RULES = (
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
class Run:
    """What one child reported: ``raised`` (an exception's type and message), ``returned`` (and whether
    ``expect`` accepted the value), or neither (``timed_out`` or a crash); its time and peak."""

    raised: tuple[type, str] | None = None
    returned: bool | None = None
    seconds: float = 0.0
    peak_bytes: int = 0
    timed_out: bool = False


def classify(case, run: Run, memory_limit_bytes: int) -> str:
    """The outcome of ``case`` given the child's report ``run`` (one of :data:`KINDS`)."""
    if run.timed_out:
        return HANG
    if run.raised is None and run.returned is None:
        return CRASH
    if run.peak_bytes > memory_limit_bytes:
        return HUGE
    if run.raised is not None:
        exc_type, message = run.raised
        if case.raises is None or not issubclass(exc_type, case.raises):
            return TRACEBACK
        return CLEAR if all(name in message for name in case.names) else TRACEBACK
    if case.raises is not None:
        return SILENT
    return RIGHT if run.returned else SILENT


def _child(case, write_fd: int) -> None:
    """Run ``case`` and write its report to ``write_fd`` (in the forked child)."""
    tracemalloc.start()
    start = time.perf_counter()
    raised, returned = None, None
    try:
        value = case.call()
    except Exception as err:  # the outcome being measured
        raised = (type(err), str(err))
    else:
        try:
            returned = case.raises is None and bool(case.expect(value))
        except Exception as err:  # an expect that cannot read the value: the value is wrong
            returned = False
            print(f"expect failed on {case.entry} / {case.label}: {err!r}", file=sys.stderr)
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    report = Run(raised, returned, seconds, peak)
    try:
        data = pickle.dumps(report)
    except Exception:  # an exception type that does not pickle: report it as a plain Exception
        data = pickle.dumps(Run((Exception, f"{raised[0].__name__}: {raised[1]}"), None, seconds, peak))
    with os.fdopen(write_fd, "wb") as out:
        out.write(data)


def run_case(case, time_limit: float = TIME_LIMIT) -> Run:
    """``case`` run in a forked child, killed after ``time_limit`` seconds."""
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_fd)
        code = 0
        try:
            _child(case, write_fd)
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


def cases_package(directory: Path = CASES_DIR) -> None:
    """``directory`` imported as the package ``bad_inputs`` (its cases import ``bad_inputs.case``), unless a
    package of that name is imported already (the tests' own, under pytest)."""
    if "bad_inputs" in sys.modules:
        return
    spec = importlib.util.spec_from_file_location("bad_inputs", directory / "__init__.py",
                                                  submodule_search_locations=[str(directory)])
    package = importlib.util.module_from_spec(spec)
    sys.modules["bad_inputs"] = package
    spec.loader.exec_module(package)


def load_cases(directory: Path = CASES_DIR, pattern: str = "*") -> list:
    """Every ``CASES`` list of ``cases_<pattern>.py`` in ``directory``, in file order."""
    cases_package(directory)
    cases = []
    for path in sorted(directory.glob(f"cases_{pattern}.py")):
        module = importlib.import_module(f"bad_inputs.{path.stem}")
        cases.extend(module.CASES)
    return cases


def sweep(cases, time_limit: float = TIME_LIMIT, memory_limit_bytes: int = MEMORY_LIMIT_MIB * 2**20,
          ) -> list[tuple[object, str, Run]]:
    """(case, outcome, report) for every case, run one after another."""
    return [(case, classify(case, run, memory_limit_bytes), run)
            for case in cases for run in [run_case(case, time_limit)]]


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
            by_rule[rule_of(run.raised[1])].append(1e3 * run.seconds)
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
            detail = f"{run.raised[0].__name__}: {run.raised[1]}" if run.raised else ""
            lines.append(f"DEFECT {kind}: {case.entry} / {case.label}"
                         f" ({run.peak_bytes / 2**20:.1f} MiB, {run.seconds:.2f} s) {detail}"[:400])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT, help="seconds a case may run")
    parser.add_argument("--memory-limit", type=float, default=MEMORY_LIMIT_MIB,
                        help="MiB a case may allocate")
    parser.add_argument("--entry", help="only the cases of entries holding this text")
    parser.add_argument("--module", default="*", help="only tests/bad_inputs/cases_MODULE.py (a glob)")
    args = parser.parse_args(argv)
    cases = load_cases(pattern=args.module)
    if args.entry:
        cases = [c for c in cases if args.entry in c.entry]
    results = sweep(cases, args.time_limit, int(args.memory_limit * 2**20))
    print(report(results))
    return 1 if any(kind in DEFECTS for _, kind, _ in results) else 0


if __name__ == "__main__":
    sys.exit(main())
