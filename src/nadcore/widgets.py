"""The gamma(l) explorer: a live ipywidgets version and a static Plotly version for the HTML book.

Both draw the SNR gamma(l) of Theorem 1 and the Bayes accuracy after pooling in closed form with the
exact constant, `pooling.bayes_accuracy` = Phi(eps gamma(l) / (2 sigma sqrt(S))) (`ACCURACY`).
The static version precomputes them for every prefilter, S and eps/sigma and switches between them
in the browser, with Plotly's JavaScript served by the book itself (the book's build hook,
`book/_ext/nadbook_sphinx.py`), so it works with no kernel and no network.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from nadcore import pooling
from nadcore.checks import InputError

if TYPE_CHECKING:
    from ipywidgets import interactive

KINDS = ("average", "gaussian", "ideal")             # the prefilters of Fig. 4a
ACCURACY = "Bayes accuracy Φ(ε γ(ℓ) / (2σ√S))"        # Theorem 1, exact constant (the static explorer)
ACCURACY_TEX = r"Bayes accuracy $\Phi(\epsilon\,\gamma(\ell)\,/\,(2\sigma\sqrt{S}))$"   # the live one
GAMMA = "SNR γ(ℓ) (clipped at 1000)"


def _curves(kind, D, S, eps, sigma):
    m_hat = pooling.prefilter(kind, D, S)
    gamma = pooling.snr_gamma(m_hat, S).numpy()
    acc = pooling.bayes_accuracy(m_hat, S, eps, sigma).numpy()
    return gamma, acc


def _display_gamma(gamma, cap=1e3):
    """gamma clipped to [1e-3, cap] for a log axis (inf means no aliasing noise reaches bin l)."""
    return np.clip(np.nan_to_num(gamma, posinf=cap), 1e-3, cap)


def gamma_explorer(D: int = 128, S: int = 4, kind: str = "average", eps: float = 1.0,
                   sigma: float = 1.0) -> interactive:
    """Live explorer (needs a kernel): prefilter, S, D, eps and sigma controls redraw gamma(l) and the accuracy."""
    import ipywidgets as w
    import matplotlib.pyplot as plt

    from nadcore.plots import style

    def draw(kind, D, S, eps, sigma):
        if D % S:
            print(f"S={S} does not divide D={D}: pick another S")
            return
        gamma, acc = _curves(kind, D, S, eps, sigma)
        fig, (a, b) = style.figure(1, 2, width=0.97, height=3.0)
        a.semilogy(_display_gamma(gamma))
        a.set(xlabel=r"frequency index $\ell$", ylabel=r"$\gamma(\ell)$ (clipped at 1000)",
              title=f"{kind} prefilter, $S = {S}$, $D = {D}$")
        b.plot(acc)
        b.set(xlabel=r"frequency index $\ell$", ylabel=ACCURACY_TEX, ylim=(0.45, 1.02),
              title=rf"$\epsilon = {eps:g}$, $\sigma = {sigma:g}$")
        plt.show()

    return w.interactive(
        draw,
        kind=w.Dropdown(options=list(KINDS), value=kind, description="prefilter"),
        D=w.Dropdown(options=[32, 64, 128, 256, 512], value=D, description="D"),
        S=w.Dropdown(options=[1, 2, 4, 8, 16], value=S, description="S"),
        eps=w.FloatLogSlider(value=eps, base=10, min=-1, max=1, step=0.05, description="eps"),
        sigma=w.FloatLogSlider(value=sigma, base=10, min=-1, max=1, step=0.05, description="sigma"),
    )


def _rounded(values, digits=5):
    """Values with `digits` significant digits, to keep the embedded JSON small."""
    return [float(f"{v:.{digits}g}") for v in np.asarray(values, dtype=float)]


def explorer_data(D: int = 128, Ss: Collection[int] = (1, 2, 4, 8, 16), kinds: Iterable[str] = KINDS,
                  ratios: Collection[float] = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)) -> dict[str, dict[str, dict[str, Any]]]:
    """Precomputed frames: data[kind][S] = {"gamma": [...], "acc": {ratio: [...]}} with ratio = eps/sigma."""
    data = {}
    for kind in kinds:
        data[kind] = {}
        for S in Ss:
            gamma, _ = _curves(kind, D, S, 1.0, 1.0)
            acc = {f"{r:g}": _rounded(_curves(kind, D, S, float(r), 1.0)[1]) for r in ratios}
            data[kind][str(S)] = {"gamma": _rounded(_display_gamma(gamma)), "acc": acc}
    return data


_SCRIPT = """
var gd = document.getElementById('{plot_id}');
var data = %s;
var state = {kind: %s, S: %s, r: %s};
function redraw() {
  var d = data[state.kind][state.S];
  Plotly.restyle(gd, {y: [d.gamma, d.acc[state.r]]}, [0, 1]);
  Plotly.relayout(gd, {'title.text': 'prefilter=' + state.kind + ', S=' + state.S + ', ε/σ=' + state.r});
}
gd.on('plotly_buttonclicked', function (e) { state.kind = e.button.args[0]; redraw(); });
gd.on('plotly_sliderchange', function (e) { state[e.slider.name] = e.step.value; redraw(); });
"""


def static_gamma_explorer(D: int = 128, S: int = 4, kind: str = "average", ratio: float = 1.0,
                          Ss: Sequence[int] = (1, 2, 4, 8, 16),
                          ratios: Sequence[float] = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0),
                          include_plotlyjs: bool | str = False) -> str:
    """HTML of a Plotly explorer of gamma(l) and the Bayes accuracy that needs no kernel and no network.

    Buttons pick the prefilter, sliders pick S and eps/sigma; every combination is precomputed.
    `include_plotlyjs=False` expects Plotly to be on the page already (the book serves it).
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    if S not in Ss:
        raise InputError(f"S must be one of {list(Ss)}; got {S!r}")
    if kind not in KINDS:
        raise InputError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    if ratio not in ratios:
        raise ValueError(f"ratio (eps/sigma) must be one of {list(ratios)}; got {ratio!r}")
    data = explorer_data(D, Ss, KINDS, ratios)
    first = data[kind][str(S)]
    fig = make_subplots(rows=1, cols=2, subplot_titles=(GAMMA, ACCURACY))
    ls = list(range(D))
    fig.add_trace(go.Scatter(x=ls, y=first["gamma"], name="γ(ℓ)", mode="lines"), 1, 1)
    fig.add_trace(go.Scatter(x=ls, y=first["acc"][f"{ratio:g}"], name="accuracy", mode="lines"), 1, 2)
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_yaxes(range=[0.45, 1.02], row=1, col=2)
    fig.update_xaxes(title_text="frequency index ℓ")

    def slider(name, values, active, prefix, y):
        steps = [dict(method="skip", label=f"{v:g}", value=f"{v:g}", args=[]) for v in values]
        return dict(name=name, active=active, steps=steps, currentvalue=dict(prefix=prefix), y=y, len=0.45,
                    x=0.0 if name == "S" else 0.55, pad=dict(t=40))

    fig.update_layout(
        title=dict(text=f"prefilter={kind}, S={S}, ε/σ={ratio:g}", x=0.02, xanchor="left"), height=470,
        showlegend=False,
        margin=dict(t=110, b=40),
        updatemenus=[dict(type="buttons", direction="right", x=1.0, y=1.12, xanchor="right", yanchor="bottom",
                          showactive=True,
                          active=list(KINDS).index(kind),
                          buttons=[dict(label=k, method="skip", args=[k]) for k in KINDS])],
        sliders=[slider("S", Ss, list(Ss).index(S), "S = ", 0.0),
                 slider("r", ratios, list(ratios).index(ratio), "ε/σ = ", 0.0)],
    )
    script = _SCRIPT % (json.dumps(data), json.dumps(kind), json.dumps(str(S)), json.dumps(f"{ratio:g}"))
    return fig.to_html(full_html=False, include_plotlyjs=include_plotlyjs, post_script=script,
                       config={"displaylogo": False}, div_id="nad-gamma-explorer")


class StaticExplorer:
    """Displays `static_gamma_explorer(...)` as HTML in a notebook (Jupyter Book renders it statically)."""

    def __init__(self, **kwargs: Any) -> None:
        self.html = static_gamma_explorer(**kwargs)

    def _repr_html_(self):
        return self.html
