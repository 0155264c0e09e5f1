"""The library's checks of its parameters, before any work starts: each raises an `InputError`, a
one-line ValueError that begins with the parameter's name and says what it accepts. The CLI prints
them as its own errors, under the option's name (`cli.option_error`)."""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Collection
from typing import Any, Literal, overload


class InputError(ValueError):
    """A parameter outside what it accepts: a one-line message that begins with the parameter's name, which
    `param` holds ("r must be an integer >= 0; got -1": "r")."""

    def __init__(self, message: str) -> None:
        name = re.match(r"[A-Za-z_]\w*", message)
        if name is None:
            raise ValueError(f"an InputError's message must begin with its parameter's name; got {message!r}")
        super().__init__(message)
        self.param = name.group()


# The largest single allocation a parameter may ask for (the book's machine has 24 GiB): refused before any work.
MAX_BYTES = 8 * 2 ** 30


def allocation(param: str, value: Any, nbytes: float, what: str) -> None:
    """An `InputError` when `value` of `param` asks for `nbytes` (`what`, e.g. "the D x D covariance") above
    `MAX_BYTES`, naming the bound."""
    if nbytes > MAX_BYTES:
        raise InputError(f"{param} must keep {what} under {MAX_BYTES / 2 ** 30:g} GiB (it would take "
                         f"{nbytes / 2 ** 30:,.3g} GiB); got {value!r}")


def is_integer(value: object) -> bool:
    """True for an int or numpy integer, False for a bool (an int to Python, never a count here)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_number(value) -> bool:
    """True for a finite real number (int, float or numpy's), False for a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def number(param: str, value, low: float | None = None, *, inclusive: bool = False,
           accepted: str | None = None) -> float:
    """`value` as a float when it is a finite real number above `low` (or equal to it, with `inclusive`;
    None: unbounded), else an `InputError`: "`param` must be `accepted`; got `value`", `accepted` by
    default "a finite number > low" (">= low")."""
    if is_number(value) and (low is None or value > low or (inclusive and value == low)):
        return float(value)
    bound = "" if low is None else f" {'>=' if inclusive else '>'} {low:g}"
    raise InputError(f"{param} must be {accepted or 'a finite number' + bound}; got {value!r}")


@overload
def integer(param: str, value: Any, low: int | None = None, high: int | None = None, *,
            accepted: str | None = None, optional: Literal[False] = False) -> int: ...


@overload
def integer(param: str, value: Any, low: int | None = None, high: int | None = None, *,
            accepted: str | None = None, optional: bool) -> int | None: ...


def integer(param: str, value: Any, low: int | None = None, high: int | None = None, *,
            accepted: str | None = None, optional: bool = False) -> int | None:
    """`value` as an int when it is an integer in [`low`, `high`] (None: unbounded; with `optional`, None
    itself passes), else an `InputError`: "`param` must be `accepted`; got `value`", `accepted` by default
    "an integer in [low, high]" (or ">= low", "<= high")."""
    if optional and value is None:
        return None
    if is_integer(value) and (low is None or value >= low) and (high is None or value <= high):
        return int(value)
    raise InputError(f"{param} must be {accepted or _integers(low, high)}; got {value!r}")


def one_of(param: str, value: Any, choices: Collection[object], *, accepted: str | None = None) -> Any:
    """`value` when it is one of `choices`, else an `InputError` listing them (or saying `accepted`)."""
    if isinstance(value, str | int | float | bool | None) and value in choices:
        return value
    raise InputError(f"{param} must be {accepted or 'one of ' + ', '.join(map(repr, choices))}; got {value!r}")


def _integers(low, high):
    if low is None and high is None:
        return "an integer"
    if high is None:
        return f"an integer >= {low}"
    return f"an integer <= {high}" if low is None else f"an integer in [{low}, {high}]"


def first_line(err: BaseException | str, limit: int = 200) -> str:
    """The first line of an error's message (at most `limit` characters): what a one-line refusal quotes of it."""
    return (str(err).strip().splitlines() or [""])[0][:limit]


def out_of_memory(err: BaseException) -> bool:
    """Whether `err` says that memory ran out (Python's MemoryError, torch's CPU allocator or a GPU's): the
    machine's limit, which no parameter of the model's is to blame for."""
    text = str(err).lower()
    return isinstance(err, MemoryError) or (isinstance(err, RuntimeError) and (
        "out of memory" in text or "can't allocate memory" in text))


PRECISIONS = ("float32", "bfloat16")   # the precisions a computation may run in (the stored settings say which)


def check_precision(precision: str) -> None:
    """Raise a one-line ValueError unless `precision` is one of `PRECISIONS`."""
    one_of("precision", precision, PRECISIONS, accepted=f"one of {', '.join(PRECISIONS)}")
