"""The page helpers (`nadcore.plots.page`): tables render with one header row."""

import re

import pandas as pd
import pytest

from nadcore.plots import page


def _header_rows(html):
    """The header rows of the first table in `html`, each as the list of its cells' text."""
    head = re.search(r"<thead>(.*?)</thead>", html, re.S).group(1)
    return [[c.strip() for c in re.findall(r"<th[^>]*>(.*?)</th>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", head, re.S)]


@pytest.mark.parametrize("index, header", [
    ("network", ["network", "edit", "changed (%)"]),
    (["network", "edit"], ["network", "edit", "changed (%)"]),
    (None, ["", "network", "edit", "changed (%)"]),
])
def test_a_table_has_one_header_row_with_the_row_labels_names(index, header):
    rows = [("LeNet", "flip", 12.5), ("ViT", "shift", 3.0)]
    table = page.table(rows, ["network", "edit", "changed (%)"], index=index)
    assert _header_rows(table._repr_html_()) == [header]          # no row empty but for the index names
    plain = pd.DataFrame([list(r) for r in rows], columns=["network", "edit", "changed (%)"])
    plain = plain.set_index(index) if index is not None else plain
    assert table.to_string() == plain.to_string()                 # only the HTML changes:
    assert list(table.index.names) == list(plain.index.names)     # the data keep their index names
    if index is not None:
        assert len(_header_rows(plain._repr_html_())) == 2        # (pandas' own HTML has the extra row)


def test_a_tables_derivatives_and_cells_render_once():
    table = page.table([("a<b", 1.0), ("c", 2.0)], ["name & kind", "x"], index="name & kind")
    html = table.drop(columns=[]).rename(columns={"x": "y"})._repr_html_()
    assert _header_rows(html) == [["name &amp; kind", "y"]] and "a&lt;b" in html
