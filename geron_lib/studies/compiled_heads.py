"""Does the compiler batch the heads? The matrix products of a compiled program, read from its text.

``jax.jit(f).lower(...).as_text()`` is StableHLO (MLIR), the program as traced; ``.compile().as_text()`` is
HLO after XLA's optimisation passes. :func:`products` reads either: every ``dot_general`` / ``dot`` that runs,
with its shapes, where a computation that several places call (a fusion, a ``call``) counts once per
caller. Only text comes in (:mod:`geron_lib.interop.jax_programs` makes it), so nothing here needs jax.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from typing import NamedTuple

from ..validate import check_type


class Product(NamedTuple):
    """One matrix product: ``batch`` independent (m x k) @ (k x n) products, ``batch`` the size of its batch
    dimensions, m and n of the free dimensions of each operand, k of the contracted ones; the operands' and
    the result's shapes as the program writes them."""

    batch: int
    m: int
    k: int
    n: int
    lhs: tuple[int, ...]
    rhs: tuple[int, ...]
    out: tuple[int, ...]

    @property
    def flops(self) -> int:
        """C = 2 batch m k n (2 per multiply-add)."""
        return 2 * self.batch * self.m * self.k * self.n

    @property
    def size(self) -> tuple[int, int, int, int]:
        """(batch, m, k, n): what a product computes, whatever reshapes around it."""
        return self.batch, self.m, self.k, self.n

    def __str__(self) -> str:
        return f"{self.batch} x ({self.m} x {self.k}) @ ({self.k} x {self.n})"


def _product(lhs, rhs, out, lhs_batch, lhs_contract, rhs_batch, rhs_contract) -> Product:
    """The (batch, m, k, n) of a dot_general from its operand shapes and dimension numbers."""
    def size(shape, dims):
        return math.prod(shape[d] for d in dims)

    lhs_free = [d for d in range(len(lhs)) if d not in (*lhs_batch, *lhs_contract)]
    rhs_free = [d for d in range(len(rhs)) if d not in (*rhs_batch, *rhs_contract)]
    return Product(size(lhs, lhs_batch), size(lhs, lhs_free), size(lhs, lhs_contract), size(rhs, rhs_free),
                   tuple(lhs), tuple(rhs), tuple(out))


def _dims(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in re.findall(r"\d+", text))


# ------------------------------------------------------------------------------------------------------------
# StableHLO (as lowered)

_FUNC = re.compile(r"^\s*func\.func\s+(?:public\s+|private\s+)?@([\w.$-]+)\s*\(")
_CALL = re.compile(r"\bcall\s+@([\w.$-]+)\s*\(")
_TENSOR = re.compile(r"tensor<((?:\d+x)*)[a-z]\w*>")


def _tensor_shapes(text: str) -> list[tuple[int, ...]]:
    return [_dims(m.group(1)) for m in _TENSOR.finditer(text)]


def _stablehlo_product(line: str) -> Product:
    """A ``stablehlo.dot_general`` (or ``stablehlo.dot``) line's product, from its type signature."""
    signature = line.rsplit(" : ", 1)[1]
    lhs, rhs, out = _tensor_shapes(signature)
    if "stablehlo.dot_general" not in line:  # stablehlo.dot: a vector or a matrix, last axis by first
        return _product(lhs, rhs, out, (), (len(lhs) - 1,), (), (0,))
    batch = re.search(r"batching_dims\s*=\s*\[([\d, ]*)\]\s*x\s*\[([\d, ]*)\]", line)
    contract = re.search(r"contracting_dims\s*=\s*\[([\d, ]*)\]\s*x\s*\[([\d, ]*)\]", line)
    lb, rb = (_dims(batch.group(1)), _dims(batch.group(2))) if batch else ((), ())
    return _product(lhs, rhs, out, lb, _dims(contract.group(1)), rb, _dims(contract.group(2)))


def _stablehlo_functions(text: str) -> tuple[dict, str]:
    """{function: (its products, the functions it calls, once per call)}, and the entry (@main)."""
    functions, current = {}, None
    for line in text.splitlines():
        header = _FUNC.match(line)
        if header:
            current = functions.setdefault(header.group(1), ([], []))
        elif current is not None and re.search(r"\bstablehlo\.dot(?:_general)?\b", line):
            current[0].append(_stablehlo_product(line))
        elif current is not None:
            current[1].extend(_CALL.findall(line))
    return functions, "main"


# ------------------------------------------------------------------------------------------------------------
# HLO (after optimisation)

_COMPUTATION = re.compile(r"^(?:ENTRY\s+)?%([\w.\-]+)\s+\(.*\)\s+->\s+.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%([\w.\-]+)\s*=\s*(\w+)\[([\d,]*)\]\S*\s+([\w-]+)\((.*)")
_HLO_OPERAND = re.compile(r"(?:(\w+)\[([\d,]*)\]\S*\s+)?%([\w.\-]+)")
_CALLED = re.compile(r"\b(?:calls|to_apply)=%([\w.\-]+)")


def _hlo_dims(line: str, name: str) -> tuple[int, ...]:
    found = re.search(rf"\b{name}=\{{([\d,]*)\}}", line)
    return _dims(found.group(1)) if found else ()


def _hlo_functions(text: str) -> tuple[dict, str]:
    """{computation: (its products, the computations it calls, once per call)}, and the ENTRY computation."""
    functions, current, entry, shapes = {}, None, None, {}
    for line in text.splitlines():
        header = _COMPUTATION.match(line)
        if header:
            current, shapes = functions.setdefault(header.group(1), ([], [])), {}
            entry = header.group(1) if line.startswith("ENTRY") else entry
            continue
        instruction = _INSTRUCTION.match(line) if current is not None else None
        if instruction is None:
            continue
        name, _, shape, op, rest = instruction.groups()
        shapes[name] = _dims(shape)
        current[1].extend(_CALLED.findall(rest))
        if op == "dot":
            operands = rest.split(")", 1)[0]
            # operands with their shapes written inline (older HLO printers), or by name only
            lhs, rhs = (_dims(s) if dtype else shapes[n] for dtype, s, n in _HLO_OPERAND.findall(operands))
            current[0].append(_product(lhs, rhs, shapes[name], _hlo_dims(rest, "lhs_batch_dims"),
                                       _hlo_dims(rest, "lhs_contracting_dims"),
                                       _hlo_dims(rest, "rhs_batch_dims"),
                                       _hlo_dims(rest, "rhs_contracting_dims")))
    return functions, entry


# ------------------------------------------------------------------------------------------------------------


def program_kind(text: str) -> str:
    """"stablehlo" for the MLIR text of ``lower(...).as_text()``, "hlo" for ``compile().as_text()``."""
    check_type("text", text, str)
    if re.search(r"^\s*module\b", text, re.MULTILINE) and "func.func" in text:
        return "stablehlo"
    if text.lstrip().startswith("HloModule"):
        return "hlo"
    raise ValueError("text must be a program as jax prints it: StableHLO (`module ... func.func`, from "
                     "jax.jit(f).lower(...).as_text()) or HLO (`HloModule ...`, from .compile().as_text())")


def products(text: str) -> list[Product]:
    """Every matrix product the program runs, from its entry: a product inside a computation (a fusion,
    a called function) counts once per call of it."""
    functions, entry = (_stablehlo_functions if program_kind(text) == "stablehlo" else _hlo_functions)(text)
    if entry not in functions:
        raise ValueError("text has no entry computation (@main in StableHLO, ENTRY in HLO)")

    def run(name: str) -> list[Product]:
        found, calls = functions[name]
        return [*found, *(p for callee in calls if callee in functions for p in run(callee))]

    return run(entry)


class Comparison(NamedTuple):
    """The products of one program before and after optimisation: their counts, FLOPs, and the sizes
    (batch, m, k, n) that optimisation removed (``gone``) and brought in (``new``), with their numbers."""

    before: int
    after: int
    flops_before: int
    flops_after: int
    gone: Counter
    new: Counter


def compare(before: str, after: str) -> Comparison:
    """The products of the lowered program ``before`` against the optimised ``after``."""
    check_type("before", before, str)
    check_type("after", after, str)
    first, last = products(before), products(after)
    sizes_before, sizes_after = Counter(p.size for p in first), Counter(p.size for p in last)
    return Comparison(len(first), len(last), sum(p.flops for p in first), sum(p.flops for p in last),
                      sizes_before - sizes_after, sizes_after - sizes_before)


def product_table(programs: Mapping[tuple, tuple[str, str]]) -> list[dict]:
    """One row per program of ``programs`` ({(form, style, h, T): (as lowered, optimised)}, as
    ``geron_lib.interop.jax_programs.compiled_programs`` returns): its key, the products before and after
    optimisation with their FLOPs, the sizes (batch, m, k, n) of those after with their numbers, and the
    sizes optimisation removed (``gone``) and brought in (``new``)."""
    check_type("programs", programs, Mapping)
    rows = []
    for key, texts in programs.items():
        if not (isinstance(key, tuple) and len(key) == 4 and isinstance(texts, tuple) and len(texts) == 2):
            raise ValueError(f"programs must map (form, style, h, T) to (lowered text, optimised text); "
                             f"got the key {key!r}")
        form, style, h, T = key
        change = compare(*texts)
        rows.append({"form": form, "style": style, "h": h, "T": T, **change._asdict(),
                     "sizes": Counter(p.size for p in products(texts[1]))})
    return rows
