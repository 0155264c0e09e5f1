"""One figure style for the book: figures sized for the page's column, text that reads at the rendered size.

The book's pages (Jupyter Book 1, sphinx-book-theme) show a cell's image at most `CONTENT_PX`
pixels wide in a 1280 px window; a wider PNG is scaled down, and its text with it. The inline
backend saves figures at `DPI` with a tight bounding box. So a label of `s` points renders at
`s * DPI / 72 * min(1, CONTENT_PX / png_width)` pixels. `figure` makes figures whose width is a
fraction of the column (no scaling), `use` sets the house fonts, and `smallest_text` /
`check_readable` measure the rendered size of every visible text of a figure (the tests run
`check_readable` on every figure they draw).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

import matplotlib as mpl
import matplotlib.pyplot as plt
from matplotlib.text import Text

from nadcore.checks import InputError
from nadcore.prose import NAMES

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CONTENT_PX = 672          # widest image of a page at a 1280 px window (measured in Chromium)
DPI = 100                 # the inline backend's resolution (matplotlib's figure.dpi)
MIN_TEXT_PX = 10          # the smallest rendered text the book accepts
WIDTH = CONTENT_PX / DPI  # inches: a figure of this width is shown unscaled across the column

RC: dict[Any, Any] = {   # matplotlib types rcParams' keys as literals: these are checked when set
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "figure.titlesize": 11,
    "figure.constrained_layout.use": True,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "image.interpolation": "nearest",
}

# Colours of the architectures, the same on every page.
COLORS = {"logreg": "#4c72b0", "mlp": "#dd8452", "lenet": "#55a868", "vgg11": "#c44e52", "vgg11_bn": "#c44e52",
          "resnet18": "#8172b3", "densenet121": "#937860", "vit": "#da8bc3", "mixer": "#8c8c8c",
          "convnext": "#ccb974", "resnet18_blur": "#64b5cd"}
LABELS = NAMES   # the networks by their names (`nadcore.prose`), in legends and titles


def use() -> None:
    """Set the house style (fonts, dpi, layout) for the figures drawn after it."""
    mpl.rcParams.update(RC)


def figure(nrows: int = 1, ncols: int = 1, width: float = 1.0, height: float | None = None,
           **kwargs: Any) -> tuple[Figure, Any]:
    """`plt.subplots` with the house style: `width` a fraction of the page column, `height` in
    inches (default: square panels). Returns `(fig, axes)`."""
    if not 0 < width <= 1:
        raise InputError(f"width must be a fraction of the page column in (0, 1]; got {width!r}")
    use()
    w = WIDTH * width
    h = height if height is not None else w / ncols * nrows
    return plt.subplots(nrows, ncols, figsize=(w, h), **kwargs)


def _visible_texts(fig):
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return [t for t in texts if t.figure is not None and t.get_alpha() != 0]


def png_width(fig: Figure) -> int:
    """The width in pixels of the PNG the inline backend makes of `fig` (tight bounding box)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", dpi=fig.dpi)
    buf.seek(0)
    from PIL import Image

    return Image.open(buf).size[0]


def text_px(fig: Figure) -> list[tuple[float, str]]:
    """`[(rendered size in px, text)]` of every visible text of `fig`, as the page shows it."""
    scale = fig.dpi / 72 * min(1.0, CONTENT_PX / png_width(fig))
    return [(t.get_fontsize() * scale, t.get_text()) for t in _visible_texts(fig)]


def smallest_text(fig: Figure) -> tuple[float, str] | None:
    """`(px, text)` of the smallest visible text of `fig` at its rendered size, or None without text."""
    sizes = text_px(fig)
    return min(sizes) if sizes else None


def check_readable(fig: Figure, min_px: float = MIN_TEXT_PX) -> None:
    """Raise ValueError if a visible text of `fig` renders smaller than `min_px` pixels on the page."""
    small = smallest_text(fig)
    if small is not None and small[0] < min_px - 1e-9:
        raise ValueError(f"figure text {small[1]!r} renders at {small[0]:.1f} px on the page (< {min_px} px): "
                         f"enlarge its font or make the figure narrower (its PNG is {png_width(fig)} px wide, "
                         f"the column {CONTENT_PX} px)")
