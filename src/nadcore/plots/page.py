"""What a page shows besides figures: tables, the chapter's verdict, and what is not computed here.

Tables are pandas DataFrames (the notebook renders them as HTML tables that fit the column);
`verdict` is the "paper vs this book" table each chapter opens with (glued to the top of the
page with myst-nb's `glue`); `not_computed` is the one admonition that says what a page does
not show at its scale and the command that computes it.
"""

import html

import pandas as pd
from IPython.display import HTML

VERDICT_COLUMNS = ("The paper reports", "This book measures", "Scale")
pd.set_option("display.max_colwidth", None)   # the pages show table cells whole (pandas cuts them at 50 characters)


def table(rows, columns, index=None):
    """A DataFrame of `rows` (sequences) under `columns`; `index` names the column shown as row labels."""
    df = pd.DataFrame([list(r) for r in rows], columns=list(columns))
    return df.set_index(index) if index is not None else df


def verdict(claims):
    """The chapter's "paper vs this book" table: `claims` maps a claim to `(paper, ours, scale)`."""
    df = pd.DataFrame([list(v) for v in claims.values()], columns=pd.Index(list(VERDICT_COLUMNS), name="Claim"),
                      index=list(claims))
    return df                              # "Claim" heads the row labels, on the header row


def not_computed(what, command, cost=None):
    """An admonition (HTML) saying that `what` is not computed at this page's scale, and `command`."""
    tail = f" (about {html.escape(cost)} on a 2-core CPU)" if cost else ""
    return HTML('<div class="admonition note"><p class="admonition-title">Not computed here yet</p>'
                f"<p>{html.escape(what)}: <code>{html.escape(command)}</code> computes it{tail}.</p></div>")
