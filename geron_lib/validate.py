"""Input checks shared by every public function: clear errors that name the argument and the rule,
raised before any work or allocation."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Set

import numpy as np

#: Largest number of bytes a single call may plan to allocate (weights plus activations).
MEMORY_LIMIT_BYTES = 4 * 2**30


def check_int(name: str, value, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as a Python int (a numpy integer converted exactly); TypeError unless it is an integer
    (booleans refused), ValueError outside [minimum, maximum]."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value}")
    return value


def check_type(name: str, value, cls: type):
    """``value`` itself; TypeError unless it is an instance of ``cls``."""
    if not isinstance(value, cls):
        article = "an" if cls.__name__[0] in "AEIOU" else "a"
        raise TypeError(f"{name} must be {article} {cls.__name__}, got {type(value).__name__}")
    return value


def check_bool(name: str, value) -> bool:
    """``value`` as a Python bool; TypeError unless it is True or False (a numpy bool converted)."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_number(name: str, value) -> float:
    """``value`` as a finite float; TypeError unless it is a real number (booleans refused)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    try:
        value = float(value)
    except OverflowError:  # an int or Fraction beyond the largest float, such as 10**400
        raise ValueError(f"{name} must be finite, got a number beyond the largest float") from None
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def check_positive_number(name: str, value) -> float:
    value = check_number(name, value)
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return value


def check_open_unit(name: str, value) -> float:
    """A probability strictly between 0 and 1."""
    value = check_number(name, value)
    if not 0 < value < 1:
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {value}")
    return value


def check_unit_interval(name: str, value, *, closed_right: bool = False) -> float:
    """A fraction in [0, 1) (or [0, 1] with ``closed_right``)."""
    value = check_number(name, value)
    if not (0 <= value <= 1 if closed_right else 0 <= value < 1):
        raise ValueError(f"{name} must lie in [0, 1{']' if closed_right else ')'}, got {value}")
    return value


def check_finite_array(name: str, value) -> np.ndarray:
    """``value`` itself: a numpy array of real numbers, not empty, holding no NaN or infinity."""
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got {type(value).__name__}")
    if value.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers, got an array of {value.dtype}")
    if value.size == 0:
        raise ValueError(f"{name} is empty (shape {value.shape})")
    if value.dtype.kind == "f" and not np.isfinite(value).all():
        raise ValueError(f"{name} must be finite: it holds NaN or infinity")
    return value


def check_sequence(name: str, value, what: str = "values") -> list:
    """``value`` as a list: any ordered iterable (a list, tuple, range, generator or 1-D array), but
    not a str or bytes (read letter by letter), a set (no order), a dict, another rank of array or one
    value."""
    if (isinstance(value, str | bytes | Set | Mapping) or not isinstance(value, Iterable)
            or isinstance(value, np.ndarray) and value.ndim != 1):
        shape = f" of shape {value.shape}" if isinstance(value, np.ndarray) else ""
        raise TypeError(f"{name} must be a list of {what} (or a tuple, generator or 1-D array; not a str, "
                        f"set or dict), got {type(value).__name__}{shape}")
    return list(value)


def check_choice(name: str, value, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    return value


def check_float_dtype(name: str, value) -> np.dtype:
    """``value`` as a numpy dtype, which must be float32 or float64 (None, which numpy reads as float64, is
    refused: say which)."""
    if value is None or isinstance(value, np.generic | np.ndarray | numbers.Number):
        # numpy would read the dtype off a number or an array: np.dtype(np.float32(0.5)) is float32
        raise TypeError(f"{name} must be float32 or float64 (a dtype or its name), got {value!r}")
    try:
        dtype = np.dtype(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be float32 or float64, got {value!r}") from None
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"{name} must be float32 or float64, got {dtype}")
    return dtype


def check_heads(hidden_size: int, num_attention_heads: int, *, where: str = "") -> int:
    """d_head = hidden_size / num_attention_heads; ValueError unless num_attention_heads divides hidden_size.

    Both are integers already checked. ``where`` says where ``hidden_size`` was read when it is not an
    argument of that name (such as "the width of W_Q"), and is shown beside its value.
    """
    if hidden_size % num_attention_heads:
        shown = f"{hidden_size}, {where}" if where else f"{hidden_size}"
        raise ValueError(f"hidden_size ({shown}) must be divisible by num_attention_heads "
                         f"({num_attention_heads}): every head gets d_head = hidden_size / "
                         "num_attention_heads columns")
    return hidden_size // num_attention_heads


def check_memory(n_bytes: int, what: str) -> None:
    """Refuse a plan to allocate more than :data:`MEMORY_LIMIT_BYTES`, before allocating anything."""
    if n_bytes > MEMORY_LIMIT_BYTES:
        gib = n_bytes / 2**30 if n_bytes < 2**1000 else math.inf  # beyond any float, such as 10**400
        raise ValueError(
            f"{what} would need {gib:,.1f} GiB, above the limit of "
            f"{MEMORY_LIMIT_BYTES / 2**30:,.1f} GiB (geron_lib.validate.MEMORY_LIMIT_BYTES); "
            "choose smaller sizes"
        )


def _holds_bool(value) -> bool:
    if isinstance(value, bool | np.bool_):
        return True
    return isinstance(value, list | tuple) and any(_holds_bool(v) for v in value)


def check_token_ids(name: str, value, *, vocab_size: int | None = None,
                    limit_name: str = "vocab_size") -> tuple[np.ndarray, bool]:
    """Token ids as a (B, T) int64 array, and whether the input was a single 1-D sequence.

    Accepts a list, tuple or array of non-negative whole numbers, 1-D (one sequence) or 2-D
    (batch, T); whole-valued floats such as 3.0 are accepted, 1.5 is not. Every id must be below
    ``vocab_size`` when given, which the message calls ``limit_name``. An int64 array is not copied.
    """
    rule = f"{name} must be token ids: a 1-D or 2-D list or array of non-negative integers"
    if value is None or isinstance(value, str | bytes | dict | set):
        raise TypeError(f"{rule}, got {type(value).__name__}")
    if isinstance(value, np.ndarray):
        arr = value
    else:
        try:
            arr = np.array(value)
        except ValueError as err:  # numpy refuses ragged nesting
            raise ValueError(f"{rule}; its rows have different lengths (ragged)") from err
        if _holds_bool(value):
            raise TypeError(f"{rule}; it holds booleans")
    if arr.dtype.kind == "b":
        raise TypeError(f"{rule}; it holds booleans")
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{rule}; it holds {arr.dtype} values")
    if arr.ndim not in (1, 2):
        raise ValueError(f"{rule}; got {arr.ndim} dimensions, shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty; give at least one token id")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise ValueError(f"{rule}; it holds NaN or infinity")
        whole = arr == np.round(arr)
        if not whole.all():
            raise ValueError(f"{rule}; found {arr[~whole].flat[0]!r}, which is not a whole number")
    if arr.min() < 0:
        raise ValueError(f"{rule}; found {arr.min()!r}, which is negative")
    if arr.max() >= 2**53:
        raise ValueError(f"{rule}; found {arr.max()!r}, larger than any vocabulary could be")
    ids = arr.astype(np.int64, copy=False)
    if vocab_size is not None and ids.max() >= vocab_size:
        raise ValueError(
            f"{name} holds {ids.max()}, but {limit_name} is {vocab_size}: "
            f"every value must be below {limit_name}"
        )
    single = ids.ndim == 1
    return (ids[None, :] if single else ids), single


def check_head_grid(T_values, h_values, hidden_size, batch) -> tuple[list[int], list[int], int, int]:
    """A sweep over sequence lengths T and head counts h at width H and batch B, checked:
    (T_values, h_values, H, B) as ints, each list non-empty and H divisible by every h."""
    H = check_int("hidden_size", hidden_size, minimum=1)
    B = check_int("batch", batch, minimum=1)
    T_values = [check_int("every T of T_values", T, minimum=1)
                for T in check_sequence("T_values", T_values, "integers")]
    h_values = [check_int("every h of h_values", h, minimum=1)
                for h in check_sequence("h_values", h_values, "integers")]
    if not T_values or not h_values:
        raise ValueError("T_values and h_values must each hold at least one value")
    bad = [h for h in h_values if H % h]
    if bad:
        raise ValueError(f"hidden_size ({H}) must be divisible by every h; it is not by {bad}")
    return T_values, h_values, H, B
