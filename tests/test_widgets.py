"""The gamma(l) explorer: live ipywidgets version, static Plotly version, and the Sphinx extension."""

import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest

from nadcore import pooling, widgets

matplotlib.use("Agg")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import nadbook_sphinx  # noqa: E402  (the book's build hook, outside the package)


def test_explorer_data_matches_theory():
    data = widgets.explorer_data(D=32, Ss=(2, 4), ratios=(1.0, 2.0))
    for kind in widgets.KINDS:
        m_hat = pooling.prefilter(kind, 32, 4)
        gamma = pooling.snr_gamma(m_hat, 4).numpy()
        np.testing.assert_allclose(data[kind]["4"]["gamma"], np.clip(np.nan_to_num(gamma, posinf=1e3), 1e-3, 1e3),
                                   rtol=1e-4)
        np.testing.assert_allclose(data[kind]["4"]["acc"]["2"], pooling.bayes_accuracy(m_hat, 4, 2.0, 1.0).numpy(),
                                   atol=1e-5)
    assert data["average"]["2"]["gamma"] != data["average"]["4"]["gamma"]


def test_static_explorer_is_self_contained_html():
    html = widgets.static_gamma_explorer(D=32, S=4, Ss=(2, 4, 8))
    assert 'id="nad-gamma-explorer"' in html
    assert "<script src" not in html and "cdn" not in html.lower()  # no network, Plotly comes from the book
    assert "plotly_sliderchange" in html and "plotly_buttonclicked" in html
    payload = re.search(r"var data = (\{.*?\});\n", html).group(1)
    assert set(json.loads(payload)) == set(widgets.KINDS)
    assert len(widgets.static_gamma_explorer(D=32, S=4, Ss=(4,), include_plotlyjs=True)) > 1_000_000
    assert widgets.StaticExplorer(D=32, S=4, Ss=(4,))._repr_html_().startswith("<div")


@pytest.mark.parametrize("kwargs, match", [
    (dict(S=3), "S must be one of"),
    (dict(kind="box"), "kind must be one of"),
    (dict(ratio=0.3), "ratio"),
])
def test_static_explorer_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        widgets.static_gamma_explorer(D=32, **kwargs)


def test_live_explorer_controls_redraw():
    ui = widgets.gamma_explorer(D=64, S=4)
    controls = {w.description: w for w in ui.kwargs_widgets}
    assert set(controls) == {"prefilter", "D", "S", "eps", "sigma"}
    controls["prefilter"].value = "gaussian"
    controls["S"].value = 8
    assert ui.kwargs == {"kind": "gaussian", "D": 64, "S": 8, "eps": 1.0, "sigma": 1.0}
    controls["D"].value = 32
    controls["S"].value = 16  # still divides 32
    assert ui.kwargs["S"] == 16


def test_sphinxext_serves_plotly_js(tmp_path):
    calls = []
    app = SimpleNamespace(outdir=str(tmp_path), builder=SimpleNamespace(format="html"),
                          add_js_file=lambda name, **kw: calls.append(name),
                          add_css_file=lambda name, **kw: calls.append(name),
                          set_html_assets_policy=lambda policy: calls.append(policy),
                          connect=lambda event, fn, **kw: calls.append(event))
    assert nadbook_sphinx.setup(app)["parallel_read_safe"]
    assert "html-page-context" in calls and "build-finished" in calls and "doctree-resolved" in calls
    assert "env-get-updated" in calls                       # figures numbered by chapter
    assert "nadbook.css" in calls and "always" in calls     # the book's stylesheet; MathJax on every page
    for body, scripts in (("<div class=\"plotly-graph-div\"></div>", ["plotly.min.js"]), ("<p>prose</p>", [])):
        calls.clear()
        nadbook_sphinx.plotly_where_drawn(app, "page", "page.html", {"body": body}, None)
        assert calls == scripts                              # Plotly only where a page draws with it
    nadbook_sphinx.copy_assets(app, None)
    copied = tmp_path / "_static" / "plotly.min.js"
    assert copied.stat().st_size == nadbook_sphinx.plotly_js_path().stat().st_size
    assert (tmp_path / "_static" / "mathjax" / "tex-mml-chtml.js").is_file()
    css = (tmp_path / "_static" / "nadbook.css").read_text()
    assert "pasted-text" in css and "table.dataframe thead th { text-align: left; }" in css


def test_a_percent_sign_stays_on_the_line_of_its_glued_number():
    from docutils import nodes

    number = lambda text: nodes.inline(text, text, classes=["pasted-text"])
    para = nodes.paragraph("", "", nodes.Text("average pooling "), number("95.8"), nodes.Text(" %, BlurPool-3 "),
                           number("81.6"), nodes.Text(" points"), nodes.inline("", "7", classes=["other"]),
                           nodes.Text(" % typed"))
    nadbook_sphinx.units_on_the_numbers_line(None, nodes.section("", para), "page")
    assert para.astext() == "average pooling 95.8\u00a0%, BlurPool-3 81.6 points7 % typed"


def test_both_explorers_name_the_accuracy_they_draw():
    html = widgets.static_gamma_explorer(D=32, S=4, Ss=(4,))
    assert "Φ(ε γ(ℓ) / (2σ√S))" in widgets.ACCURACY
    assert json.dumps(widgets.ACCURACY).replace("/", "\\u002f")[1:-1] in html   # Plotly escapes "/"
    ui = widgets.gamma_explorer(D=32, S=4)
    import matplotlib.pyplot as plt

    with plt.ioff():
        ui.update()
    ylabels = [ax.get_ylabel() for ax in plt.gcf().axes]
    assert widgets.ACCURACY_TEX in ylabels
