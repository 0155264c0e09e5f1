"""Sphinx extension of the book: serve the JavaScript the pages need from the book itself.

Readers offline, and the browser test with the network off, must see rendered math and
interactive figures, so nothing is loaded from a CDN:
- MathJax 3 comes from the `django-static-mathjax` package and is copied to `_static/mathjax`.
"""

import shutil
from pathlib import Path

MATHJAX_DIR = "mathjax"


def _mathjax_source():
    import mathjax  # the django-static-mathjax package: MathJax's es5 build as package data

    return Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"


def _use_local_mathjax(app, config):
    config.mathjax_path = f"{MATHJAX_DIR}/tex-mml-chtml.js"


def _copy_assets(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / MATHJAX_DIR
    if not (target / "tex-mml-chtml.js").exists():
        shutil.copytree(_mathjax_source(), target, dirs_exist_ok=True)


def setup(app):
    app.connect("config-inited", _use_local_mathjax)
    app.connect("build-finished", _copy_assets)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
