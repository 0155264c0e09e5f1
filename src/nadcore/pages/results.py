"""What the results page states: every verdict on the papers' figures and claims by one policy, the book's own
questions, and the counts, from the bundle."""

from __future__ import annotations

from typing import Any

from IPython.display import Markdown

from nadcore import verdicts

STEM = "results"


def findings(bundle_dir: str = "../bundle") -> dict[str, Any]:
    """Every table, count and policy text the results page glues, from the bundle in `bundle_dir`."""
    results = verdicts.load(bundle_dir)
    rows = verdicts.rows(results)
    out: dict[str, Any] = {f"table_{paper}": Markdown(verdicts.table(rows, paper)) for paper in ("NAD", "follow-up")}
    out.update({"notation": Markdown(verdicts.NOTATION), "differences": Markdown(verdicts.differences(rows)),
                "thresholds": Markdown(verdicts.THRESHOLDS), "policy": Markdown(verdicts.POLICY), "n_rows": len(rows)})
    out.update({f"n_{key}": n for key, n in verdicts.counts(rows).items()})
    beyond = verdicts.questions(results)
    out.update({"table_beyond": Markdown(verdicts.question_table(beyond)),
                "thresholds_beyond": Markdown(verdicts.question_thresholds()), "n_questions": len(beyond)})
    return out
