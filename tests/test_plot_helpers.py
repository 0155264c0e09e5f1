"""The NAD plots of the public API (`plots.nads.grid`, `plots.nads.spectrum`): matplotlib's conventions
(`fig=`, `ax=`, sizes in inches), arguments checked before anything is drawn."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from conftest import estimate_kw  # noqa: E402

from nadcore import nads  # noqa: E402
from nadcore.plots import nads as plots  # noqa: E402


@pytest.fixture(scope="module")
def result():
    with pytest.warns(nads.NADTrustWarning):          # 12 networks: sampling noise, as the warning says
        return estimate_kw("logreg", 12, progress=False)


def test_grid_draws_the_first_k_nads_beside_their_energy_on_a_square_figure_of_the_given_width(result):
    fig = plots.grid(result, 7, size=5.0)
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert len(shown) == 14 and fig.get_size_inches()[0] == 5.0
    assert 0.7 < fig.get_size_inches()[1] / 5.0 < 1.4                  # square, not one row of tiny panels
    first = shown[0].images[0].get_array()
    assert np.abs(first).max() == pytest.approx(1.0) and first.max() == pytest.approx(1.0)   # signed, scaled
    assert [ax.get_title() for ax in shown[:2]] == ["$u_{0}$", "$|\\hat u_{0}|^2$"]
    plt.close(fig)


def test_grid_draws_into_a_given_subfigure_and_without_energy(result):
    fig = plt.figure(figsize=(8, 4))
    left, right = fig.subfigures(1, 2)
    assert plots.grid(result, 4, fig=right, energy=False) is right
    assert len(right.axes) == 4 and not left.axes
    plt.close(fig)


def test_spectrum_draws_on_the_given_axes(result):
    fig, ax = plt.subplots()
    assert plots.spectrum(result, ax=ax, label="logreg", color="r") is ax
    (line,) = ax.get_lines()[:1]
    y = line.get_ydata()
    assert y[0] == 1.0 and np.all(np.diff(y) <= 0) and ax.get_yscale() == "log" and line.get_label() == "logreg"
    assert [t.get_text() for t in ax.texts] == ["rank 11"] and ax.get_title() == ""   # the cut named (12 networks)
    plt.close(fig)
    own = plots.spectrum(result)                         # a figure of its own says how far to trust it
    assert own.get_title() == result.trust().label != ""
    plt.close(own.figure)


@pytest.mark.parametrize("call, named", [
    (lambda r, ax: plots.grid(r, 0), "k must be an integer in"),
    (lambda r, ax: plots.grid(r, 2000), "k must be an integer in"),
    (lambda r, ax: plots.grid(r, 4, size=0), "size must be a size in inches"),
    (lambda r, ax: plots.grid(r, 4, fig=ax), "fig must be a matplotlib Figure"),
    (lambda r, ax: plots.grid(r.nads, 4), "result must be a NADResult"),
    (lambda r, ax: plots.spectrum(r, ax="left"), "ax must be a matplotlib Axes"),
])
def test_bad_arguments_are_one_line_errors_before_any_drawing(result, call, named):
    _, ax = plt.subplots()                               # an Axes where a figure belongs
    before = plt.get_fignums()
    with pytest.raises(ValueError, match=named) as err:
        call(result, ax)
    assert "\n" not in str(err.value) and plt.get_fignums() == before and not ax.images
    plt.close("all")
