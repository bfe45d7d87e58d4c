"""Input checks shared by every public function: clear errors that name the argument and the rule,
raised before any work or allocation."""

from __future__ import annotations

import contextlib
import math
import numbers
from collections.abc import Iterable, Mapping, Set
from fractions import Fraction

import numpy as np

#: Largest number of bytes a single call may plan to allocate (weights plus activations).
MEMORY_LIMIT_BYTES = 4 * 2**30


def exact_real(value) -> int | float | Fraction | None:
    """The exact value of a real number, read from the number itself and never through its own methods
    (``__int__``, ``__index__``, ``__float__``, which a subclass may redefine): an int or a subclass of int
    (its digits), a float or a subclass (its bits), a Fraction (its numerator and denominator), a numpy
    integer or floating scalar (numpy's value of it; a longdouble rounded to a float). None for anything
    else: a bool, a ``numpy.timedelta64`` (a duration, though numpy makes it an integer type), a Decimal,
    a complex number, any other type. Never raises."""
    try:
        if isinstance(value, bool | np.bool_ | np.timedelta64):
            return None
        if isinstance(value, int):
            return int.__index__(value)
        if isinstance(value, float):
            return float.__float__(value)
        if isinstance(value, Fraction):
            return Fraction(int.__index__(Fraction.numerator.__get__(value)),
                            int.__index__(Fraction.denominator.__get__(value)))
        if isinstance(value, np.integer):
            return int.__index__(np.generic.item(value))
        if isinstance(value, np.floating):
            return float(np.generic.item(value))
    except Exception:  # noqa: BLE001 - a subclass may break anything; it is then no number we read
        return None
    return None


def _type_of(value) -> str:
    """The type of a number, with what is odd about it: a timedelta64 is a duration."""
    if isinstance(value, np.timedelta64):
        return "numpy.timedelta64: a duration, not a number"
    return type(value).__name__


def check_int(name: str, value, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as a Python int, read exactly (:func:`exact_real`: a subclass's own ``__int__`` is not
    trusted); TypeError unless it is an int or a numpy integer (booleans and timedelta64 refused),
    ValueError outside [minimum, maximum]."""
    exact = exact_real(value)
    if not isinstance(exact, int):
        raise TypeError(f"{name} must be an integer, got {value!r} ({_type_of(value)})")
    value = exact
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


def _about(value: Fraction) -> str:
    """``value`` to three digits, as "about 1e-400", from the logarithms of its numerator and denominator
    (never written out in digits)."""
    log = math.log10(abs(value.numerator)) - math.log10(value.denominator)
    exponent = math.floor(log)
    mantissa = round(10 ** (log - exponent), 2)
    if mantissa >= 10:  # rounded up to the next power of ten
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"about {'-' if value < 0 else ''}{mantissa:g}e{exponent}"


def check_number(name: str, value) -> float:
    """``value`` as a finite float, read exactly (:func:`exact_real`, and a numpy longdouble by its own
    digits); TypeError unless it is an int, float, Fraction or numpy number (booleans and timedelta64
    refused); ValueError for a value no float holds: beyond the largest float, or not 0 but nearer 0 than
    the smallest positive float (5e-324), which it would round to 0."""
    exact = exact_real(value)
    if exact is None:
        raise TypeError(f"{name} must be a real number, got {value!r} ({_type_of(value)})")
    if isinstance(value, np.longdouble):  # exact_real rounds it to a float, which may give 0 or infinity
        with contextlib.suppress(OverflowError, ValueError):  # infinity and NaN: the float they are
            exact = Fraction(*np.longdouble.as_integer_ratio(value))
    try:
        number = float(exact)
    except OverflowError:  # an int or Fraction beyond the largest float, such as 10**400
        raise ValueError(f"{name} must be finite, got a number beyond the largest float") from None
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {number}")
    if number == 0 and exact != 0:  # a Fraction such as 1/10**400, a longdouble such as 1e-400
        side = ("smaller than the smallest positive float" if exact > 0
                else "larger than the largest float below 0")
        bound = math.ulp(0.0) if exact > 0 else -math.ulp(0.0)
        raise ValueError(f"{name} is {_about(exact)}, {side} ({bound!r}): it would round to 0")
    return number


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


def check_unmasked(name: str, value):
    """``value`` itself; TypeError for a numpy masked array: numpy's reductions skip its masked entries
    (min, max, all), while indexing and arithmetic read the values under the mask, so no check of it holds
    for what is computed."""
    if isinstance(value, np.ma.MaskedArray):
        raise TypeError(f"{name} must be a plain numpy array, got a masked array: numpy's min, max and all "
                        "skip its masked entries while the arithmetic reads what they hide; fill them "
                        "(np.ma.filled) or drop them (.compressed()) first")
    return value


def is_torch_tensor(value) -> bool:
    """True for a torch tensor (or a Parameter), told without importing torch."""
    return any(cls.__name__ == "Tensor" and cls.__module__.split(".")[0] == "torch"
               for cls in type(value).__mro__)


def plain_array(name: str, value) -> np.ndarray:
    """``value`` as a numpy array to read (``np.asarray``; an array is not copied), refusing what that
    would misread: a masked array (its mask would be dropped). A torch tensor is read by its values:
    detached from its graph (one that requires grad included) and copied from its device into an array of
    its own; one numpy cannot hold (bfloat16, the meta device) is refused naming ``name``."""
    check_unmasked(name, value)
    if is_torch_tensor(value):
        try:
            return value.detach().cpu().numpy().copy()  # its values now, whatever the tensor becomes
        except Exception as err:  # noqa: BLE001 - torch's errors for bfloat16, the meta device, ...
            raise TypeError(f"{name} is a torch tensor that numpy cannot read ({type(err).__name__}: {err}); "
                            "give one with values on the CPU, in a dtype numpy has") from None
    return np.asarray(value)


def check_finite_array(name: str, value, *, dtype: np.dtype | None = None,
                       shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``value`` itself: a numpy array of real numbers (not a masked array), not empty, of ``dtype`` and
    ``shape`` when they are given, holding no NaN or infinity."""
    check_unmasked(name, value)
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got {type(value).__name__}")
    if value.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers, got an array of {value.dtype}")
    if dtype is not None and value.dtype != dtype:
        raise TypeError(f"{name} is {value.dtype}, but dtype is {dtype}: every array must be in dtype (what "
                        "is computed from them is in their dtype, whatever dtype says)")
    if shape is not None and value.shape != shape:
        raise ValueError(f"{name} has shape {value.shape}, expected {shape}")
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


def check_held_by(name: str, value: float, dtype: np.dtype) -> float:
    """``value`` (a positive float) itself; ValueError when ``dtype`` cannot hold it: below its smallest
    normal number a float rounds to 0 or keeps few digits (1e-300 is 0 in float32), and an epsilon that
    guards a division, such as a layer norm's, then divides 0 by 0 on a constant row."""
    tiny = float(np.finfo(dtype).tiny)
    if value < tiny:
        raise ValueError(f"{name} ({value:g}) must be at least the smallest normal {dtype} ({tiny:.3g}): "
                         f"{dtype} holds it as {float(dtype.type(value)):g}; choose a larger {name} or "
                         "dtype float64")
    return value


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


def _misread_item(value):
    """In a list or tuple (nested), the first item numpy would misread, else None: a bool (read as 0 or 1),
    or a subclass of int or float (numpy reads it through its own ``__index__`` or ``__float__``, which may
    not give its value)."""
    subclass = isinstance(value, int | float) and type(value) not in (int, float)
    if isinstance(value, bool | np.bool_) or subclass and not isinstance(value, np.generic):
        return value
    if isinstance(value, list | tuple):
        return next((found for v in value if (found := _misread_item(v)) is not None), None)
    return None


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
    if isinstance(value, np.ndarray) or is_torch_tensor(value):
        arr = plain_array(name, value)
    else:
        try:
            arr = np.array(value)
        except ValueError as err:  # numpy refuses ragged nesting
            raise ValueError(f"{rule}; its rows have different lengths (ragged)") from err
        misread = _misread_item(value)
        if isinstance(misread, bool | np.bool_):
            raise TypeError(f"{rule}; it holds booleans")
        if misread is not None:
            base = int if isinstance(misread, int) else float
            raise TypeError(f"{rule}; it holds a {type(misread).__name__}, a subclass of {base.__name__} "
                            "that numpy reads through its own __index__ or __float__, not its value "
                            f"{base.__repr__(misread)}: give plain ints")
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
