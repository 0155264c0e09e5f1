"""What a page shows besides figures: tables, and what is not computed here.

Tables are pandas DataFrames (the notebook renders them as HTML tables that fit the column; the
chapters' claims tables are `verdicts.chapter_table`'s); `not_computed` is the one admonition
that says what a page does not show at its scale and the command that computes it.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Any

import pandas as pd
from IPython.display import HTML

if TYPE_CHECKING:
    from collections.abc import Hashable, Iterable, Mapping, Sequence

pd.set_option("display.max_colwidth", None)   # the pages show table cells whole (pandas cuts them at 50 characters)


class Table(pd.DataFrame):
    """A DataFrame whose HTML has one header row: the names of the row labels head their columns on the
    row of the column names. (Pandas writes them on a second header row of their own, empty but for
    them, which every page's table showed.) Everything else is pandas': `index.names`, `to_string`,
    `reset_index`, `.style` and the like are unchanged."""

    @property
    def _constructor(self):
        return Table

    def _repr_html_(self):
        return one_header_row(self)


def one_header_row(df: pd.DataFrame) -> str | None:
    """The notebook HTML of DataFrame `df` with its index names, if any, on the columns' header row (in
    its first, otherwise empty cells) rather than on a header row of their own."""
    names = list(df.index.names)
    plain = pd.DataFrame(df)
    if all(n is None for n in names) or df.columns.nlevels > 1 or df.columns.name is not None:
        return pd.DataFrame._repr_html_(plain)
    text = pd.DataFrame._repr_html_(plain.rename_axis(index=[None] * len(names)))
    if text is None:                       # pandas' display.notebook_repr_html is off
        return None
    head = re.search(r"<thead>\s*<tr[^>]*>", text)
    if head is None:                       # no header row to label
        return text
    corner = re.compile(r"\s*<th></th>")
    pos, cells = head.end(), []
    for name in names:                     # the row labels' cells, empty, open the header row
        cell = corner.match(text, pos)
        if cell is None:
            return pd.DataFrame._repr_html_(plain)
        cells.append(cell.group().replace("<th></th>", f"<th>{html.escape('' if name is None else str(name))}</th>"))
        pos = cell.end()
    return text[:head.end()] + "".join(cells) + text[pos:]


def table(rows: Iterable[Iterable[Any]], columns: Iterable[Hashable],
          index: Hashable | Sequence[Hashable] | None = None) -> pd.DataFrame:
    """A `Table` (a DataFrame) of `rows` (sequences) under `columns`; `index` names the column (or columns)
    shown as row labels. Its HTML has one header row, the row labels' names on it."""
    df = Table([list(r) for r in rows], columns=list(columns))
    return df.set_index(index) if index is not None else df


def not_computed(what: str, command: str, cost: str | None = None) -> HTML:
    """An admonition (HTML) saying that `what` is not computed at this page's scale, and `command`."""
    tail = f" (about {html.escape(cost)} on a 2-core CPU)" if cost else ""
    return HTML('<div class="admonition note"><p class="admonition-title">Not computed here yet</p>'
                f"<p>{html.escape(what)}: <code>{html.escape(command)}</code> computes it{tail}.</p></div>")


def closed(box: HTML, title: str = "Not computed here yet") -> HTML:
    """`box` (HTML, e.g. `not_computed`'s) in a dropdown closed under `title`, styled as the book's dropdowns."""
    return HTML('<details class="sd-sphinx-override sd-dropdown sd-card sd-mb-3">'
                f'<summary class="sd-summary-title sd-card-header">{html.escape(title)}</summary>'
                f'<div class="sd-summary-content sd-card-body">{box.data}</div></details>')


def glue_all(glued: Mapping[str, Any]) -> None:
    """Glue each value of a page's findings (`nadcore.pages`) under its name, for the page's text to read
    (myst-nb's `glue`, not displayed where it is glued); a figure, once glued, is closed (it shows where the text
    places it, not below the cell)."""
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure
    from myst_nb import glue

    for name, value in glued.items():
        glue(name, value, display=False)
        if isinstance(value, Figure):
            plt.close(value)


def quiet_smoke(scale: str) -> None:
    """At the smoke scale, silence `NADTrustWarning`: a page's smoke run estimates NADs from a handful of
    networks, which its text calls noise (any other scale warns as usual)."""
    import warnings

    from nadcore.nads import NADTrustWarning

    if scale == "smoke":
        warnings.simplefilter("ignore", NADTrustWarning)
