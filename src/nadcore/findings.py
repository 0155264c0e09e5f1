"""The outcomes of the book's own questions (beyond reproducing the papers' figures): a question, what was
expected before measuring, what was measured and whether it came out so, by one policy.

A question holds when every case it names does, holds in part when some do, does not hold when none does; it
is not resolved where the measurement cannot tell (an interval straddling its threshold), and not computed
here where its results are not stored. The results page's verdicts on the papers' own figures (reproduced or
not, `verdicts.VERDICTS`) answer another question: whether a published number came out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nadcore.checks import InputError

HOLDS, IN_PART, FAILS, UNRESOLVED, MISSING = (
    "holds", "holds in part", "does not hold", "not resolved", "not computed here")
OUTCOMES = (HOLDS, IN_PART, FAILS, UNRESOLVED, MISSING)


@dataclass(frozen=True)
class Verdict:
    """One question (or a prediction tested), in a chapter's table and on the results page: the `question`, what
    was `expected` before measuring (the paper's reading, or ours), what we `measured`, its `outcome` (one of
    `OUTCOMES`), the `reason` when it does not plainly hold, the `scale` it was measured at, `see` (`(text,
    label)` of the pages that show it) and the numbers behind it by name (`values`)."""
    question: str
    expected: str
    measured: str
    outcome: str
    reason: str = ""
    scale: str = ""
    see: tuple = ()
    values: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise InputError(f"outcome must be one of {', '.join(OUTCOMES)}; got {self.outcome!r}")


def outcome(flags: Sequence[bool]) -> str:
    """The outcome of a question from whether each of its cases held: all, some or none."""
    return HOLDS if all(flags) else IN_PART if any(flags) else FAILS
