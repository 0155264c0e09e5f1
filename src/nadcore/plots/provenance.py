"""The tables of appendix B, "Where every number comes from": one per page, from `nadcore.provenance`.

`records_table` writes a page's `Row`s one per line: the bundle item, what it holds (network and kind),
the settings a reader compares, how many results, when and in how much compute time they were made;
where every row was computed on one machine with one thread count, the caption says so once, else a
column does. `scales_table` puts each chapter's smoke run beside its published scale.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from nadcore import prose
from nadcore.plots import antialias, page, style

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    import pandas as pd
    from matplotlib.figure import Figure
    from pandas.io.formats.style import Styler

    from nadcore.provenance import Row

KINDS = {"D(v)": "trainings on D(v)", "D(u_i)": "trainings on D(uᵢ)", "pair": "trainings on D(vᵢ) + D(vⱼ)",
         "stand-in": "stand-in + D(vₖ)", "flip": "trainings on flipped images", "carrier": "trainings with a carrier",
         "NADs": "NADs", "convergence": "N vs 2N", "linear model": "Fig. 4b: the linear model of pooling trained",
         "Theorem 1": "Theorem 1 by Monte Carlo", "Lemma 1": "Lemma 1's Hessians",
         "precision": "bfloat16 and torch.compile against float32"}
METHODS = {"secant": "secant", "autograd": "exact gradient", "hessian": "Hessian"}


def network(name: str) -> str:
    """`arch/pooling` of `provenance.describe` as a reader names it: "LeNet (avg pool)"."""
    arch, _, pooling = name.partition("/")
    archs = [style.LABELS.get(a, a) for a in arch.split("+")] if arch else []
    label = " and ".join(archs) if len(archs) <= 2 else f"{len(archs)} networks"
    return label + (f" ({antialias.SHORT.get(pooling, pooling)})" if pooling else "")


def _number(v):
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _values(values, fmt=_number):
    return ", ".join(fmt(v) for v in values)


def settings_text(fields: Mapping[str, Sequence[Any]]) -> str:
    """The settings of a `Row` in words: "exact gradient, N = 10,000, bfloat16; n = 10,000, σ = 3, 20 epochs"."""
    parts = []
    if "method" in fields:
        parts.append(_values(fields["method"], lambda m: METHODS.get(m, m)))
    if "networks" in fields:
        parts.append(f"N = {_values(fields['networks'])}")
    if "sizes" in fields:
        parts.append("N = " + "; ".join(f"{s[0]:,} to {s[-1]:,}" if len(s) > 1 else f"{s[0]:,}"
                                        for s in fields["sizes"]))
    for name in ("precision", "dataset"):
        if name in fields:
            parts.append(_values(fields[name]))
    if "compiled" in fields:
        parts.append("torch.compile")
    for name, head in (("n", "n = "), ("sigma", "σ = "), ("eps", "ε = ")):
        if name in fields:
            parts.append(head + _values(fields[name]))
    if "epochs" in fields:
        parts.append(f"{_values(fields['epochs'])} epochs")
    return ", ".join(parts)


def _dates(row):
    if not row.first:
        return "–"
    return row.first if row.first == row.last else f"{row.first} to {row.last[5:]}"


def threads_text(threads: Iterable[int]) -> str:
    """A row's thread counts in words: "1 thread", "2 threads", "1, 2 threads"."""
    threads = list(threads)
    return f"{_values(threads)} thread" + ("" if threads == [1] else "s")


def _where(row):
    return "; ".join(row.machines) + (f", {threads_text(row.threads)}" if row.threads else "")


def result_text(row: Row) -> str:
    """What a `Row` holds and its settings: "LeNet (avg pool), trainings on D(v): n = 10,000, σ = 3, 20 epochs"."""
    what = ", ".join(x for x in (network(row.network), KINDS.get(row.kind, row.kind)) if x)
    settings = settings_text(row.fields)
    return f"{what}: {settings}" if settings else what


def records_table(rows: Sequence[Row]) -> Styler | None:
    """The rows of `provenance.page_rows` as a table (a pandas Styler; `.data` is the table): item, result
    and settings, how many, when and the compute time; the machine and threads most rows share in the
    caption, a last column for the rows computed elsewhere. None without rows."""
    if not rows:
        return None
    where = [_where(r) for r in rows]
    single = [(r, w) for r, w in zip(rows, where) if len(r.machines) == 1 and len(r.threads) <= 1] or list(
        zip(rows, where))
    usual = max({w for _, w in single}, key=lambda w: sum(r.count for r, x in single if x == w))
    body = [[r.item, result_text(r), f"{r.count:,}" + (f" ({r.seeds} seeds)" if r.seeds > 1 else ""), _dates(r),
             "–" if r.seconds is None else prose.duration(r.seconds)] + ([] if len(set(where)) == 1 else
                                                                       ["" if w == usual else w])
            for r, w in zip(rows, where)]
    columns = ["item", "result and settings", "stored", "computed", "compute time"]
    if len(set(where)) > 1:
        columns.append("elsewhere")
    df = page.table(body, columns).set_index("item").rename_axis(None)
    total = sum(r.seconds or 0 for r in rows)
    caption = (f"{sum(r.count for r in rows):,} stored results, {hours(total)} of compute in all, on {usual}"
               + (" but where the last column says otherwise." if len(set(where)) > 1 else "."))
    styled = df.style.set_caption(caption).set_table_styles(
        {"computed": [{"selector": "td", "props": "white-space: nowrap"}]})   # items repeat: no set_properties
    styled = styled.format_index(lambda item: f"<code>{html.escape(str(item))}</code>", axis=0)   # names, as typed
    return styled.set_table_styles(overwrite=False, table_styles=[  # ty: ignore[missing-attribute]
        {"selector": "th, td",
         "props": "font-size: 0.8em; padding: 0.15em 0.4em; text-align: left; vertical-align: top"},
        {"selector": "th.row_heading", "props": "overflow-wrap: anywhere; min-width: 7em"},   # long item names
        {"selector": "th.row_heading code", "props": "white-space: normal; word-break: break-all; font-size: 1em"},
        {"selector": "caption", "props": "caption-side: bottom; font-size: 0.85em; text-align: left"}])


def pending_text(todo: Sequence[tuple[str, str]]) -> str:
    """`provenance.pending`'s items in one sentence (Markdown): what each holds, in status's words, its
    command folded into one for all; "" when none."""
    if not todo:
        return ""
    command = r";? ?`python -m nadcore\.bundle [^`]+` computes the rest ?"
    lines = [re.sub(command, " ", line).strip() for _, line in todo]
    return ("Not complete yet: " + "; ".join(lines) + ". `python -m nadcore.bundle ITEM` computes the rest of each.")


def compute_figure(seconds: Mapping[str, Mapping[str, float]]) -> Figure:
    """Hours of compute behind each page: `seconds` `{page: {"CPU": seconds, "GPU": seconds}}`
    (`provenance.seconds_by_page`), a bar for its stored results computed on CPUs, one for those on GPUs, on
    a log axis (a result that two pages read counts on both)."""
    pages = list(seconds)
    fig, ax = style.figure(width=0.8, height=0.32 * len(pages) + 0.9)
    y = np.arange(len(pages))
    for shift, kind, color in ((-0.2, "CPU", "#4c72b0"), (0.2, "GPU", "#dd8452")):
        h = np.array([seconds[p][kind] / 3600 for p in pages])
        ax.barh(y[h > 0] + shift, h[h > 0], height=0.38, color=color, label=f"on {'CPUs' if kind == 'CPU' else 'GPUs'}")
    ax.set_xscale("log")
    ax.set_yticks(y, pages)
    ax.invert_yaxis()
    ax.set_xlabel("hours of compute of the stored results")
    fig.legend(loc="outside upper center", ncol=2, frameon=False)   # above the bars, over none
    return fig


def hours(seconds: float | None) -> str:
    """A cost as `prose.duration` says it (whole hours, thousands separated, from 100 hours on); "–" for None."""
    return "–" if seconds is None else prose.duration(seconds)


def scales_table(costs: Mapping[str, Sequence[float | None]]) -> pd.DataFrame:
    """One row per chapter of `costs` `{page: (smoke seconds, published-scale seconds[, stored seconds])}`
    (`provenance.chapter_costs`): the rough cost of its smoke run, of its published scale from nothing
    stored and, where given, the compute time its stored results took."""
    stored = any(len(c) > 2 for c in costs.values())
    rows = [[title, *(hours(s) for s in c)] for title, c in costs.items()]
    columns = ["page", "smoke run", "published scale, all of it"] + (["stored results took"] if stored else [])
    return page.table(rows, columns, index="page")
