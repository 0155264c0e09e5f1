"""The book's figure style and page helpers: text readable at the page's width, tables, admonitions."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from nadcore.plots import page, style  # noqa: E402


def test_a_house_figure_reads_at_the_page_width():
    fig, ax = style.figure(1, 2, width=1.0, height=2.5)
    ax[0].plot([0, 1], [0, 1], label="a line")
    ax[0].set_title("title")
    ax[0].legend()
    px, _ = style.smallest_text(fig)
    assert style.png_width(fig) <= style.CONTENT_PX + 30   # shown (nearly) unscaled
    assert px >= style.MIN_TEXT_PX
    style.check_readable(fig)


def test_small_fonts_and_wide_figures_are_refused():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.set_title("tiny", fontsize=5)                          # 6.9 px at 100 dpi, unscaled
    with pytest.raises(ValueError, match="'tiny' renders at 6.9 px"):
        style.check_readable(fig)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(16, 2), dpi=100)           # 8 pt text on a 1600 px PNG shown 672 px wide
    ax.set_title("scaled down", fontsize=8)
    [px] = [size for size, text in style.text_px(fig) if text == "scaled down"]
    assert px == pytest.approx(8 * 100 / 72 * style.CONTENT_PX / style.png_width(fig))
    with pytest.raises(ValueError, match="scaled down|renders at"):
        style.check_readable(fig)
    plt.close("all")


def test_figure_refuses_a_width_outside_the_column():
    with pytest.raises(ValueError, match="width must be a fraction"):
        style.figure(width=1.5)


def test_page_tables_and_admonitions():
    t = page.table([("a", 1.0), ("b", 2.5)], ["name", "value"], index="name")
    assert list(t.columns) == ["value"] and t.loc["b", "value"] == 2.5
    html = page.not_computed("Fig. 2 at the published settings", "python -m nadcore.bundle fig2", "1.5 h")._repr_html_()
    assert "<code>python -m nadcore.bundle fig2</code>" in html and "1.5 h" in html and "admonition" in html
    shut = page.closed(page.not_computed("Fig. 2", "python -m nadcore.bundle fig2"), "Not <yet>")._repr_html_()
    assert shut.startswith("<details") and "open" not in shut and "Not &lt;yet&gt;" in shut and "<code>" in shut
