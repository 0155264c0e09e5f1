"""The outcomes of the book's own questions (beyond reproducing the papers' figures): a question, what was
expected before measuring, what was measured and whether it came out so, by one policy.

A question holds when every case it names does, holds in part when some do, does not hold when none does; it
is not resolved where the measurement cannot tell (an interval straddling its threshold), and not computed
here where its results are not stored. The results page's verdicts on the papers' own figures (reproduced or
not, `verdicts.VERDICTS`) answer another question: whether a published number came out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

HOLDS, IN_PART, FAILS, UNRESOLVED, MISSING = (
    "holds", "holds in part", "does not hold", "not resolved", "not computed here")
OUTCOMES = (HOLDS, IN_PART, FAILS, UNRESOLVED, MISSING)


class Verdict(NamedTuple):
    """One question: `question`, what was `expected` before measuring, what we `measured`, its `outcome` (one of
    `OUTCOMES`) and the `reason` when it does not plainly hold."""
    question: str
    expected: str
    measured: str
    outcome: str
    reason: str = ""


def outcome(flags: Sequence[bool]) -> str:
    """The outcome of a question from whether each of its cases held: all, some or none."""
    return HOLDS if all(flags) else IN_PART if any(flags) else FAILS
