"""Sphinx extension of the book: serve the JavaScript the pages need from the book itself, and number
figures by chapter (`number_by_chapter`).

Readers offline, and the browser test with the network off, must see rendered math and
interactive figures, so nothing is loaded from a CDN (and `nadbook.js`, `SCRIPT`, opens the closed
dropdown or hidden output that holds a linked figure):
- MathJax 3 comes from the `django-static-mathjax` package and is copied to `_static/mathjax`.
- Plotly comes from the installed `plotly` package (`package_data/plotly.min.js`), is copied to
  `_static/plotly.min.js` and loaded by the pages that draw a Plotly figure (`plotly_where_drawn`),
  so the static gamma(l) explorer (`nadcore.widgets.static_gamma_explorer`, made with
  `include_plotlyjs=False`) works offline; the other pages are spared its 3.5 MB.
MathJax is loaded on every page (Sphinx loads it only where a page has math, but the sidebar
shows every chapter's title, some with math). The bibliography's entries are labelled as the text
cites them, author and year (`AuthorYear`, `bibtex_default_style: authoryear`). Registered in
`_config.yml` under `sphinx: local_extensions`.
"""

import re
import shutil
from pathlib import Path

MATHJAX_DIR = "mathjax"
PLOTLY_JS = "plotly.min.js"
CSS = "nadbook.css"
# Numbers glued into prose read as prose (myst-nb sets them in bold).
# Tables' column headings sit over their text, to the left (pandas aligns them right).
STYLE = "span.pasted-text { font-weight: inherit; }\ntable.dataframe thead th { text-align: left; }\n"
# A link to a figure inside a closed dropdown or a hidden cell output opens it (every enclosing <details>).
JS = "nadbook.js"
SCRIPT = """function nadbookOpenTarget() {
  const id = decodeURIComponent(window.location.hash.slice(1));
  const target = id && document.getElementById(id);
  if (!target) return;
  let opened = false;
  for (let p = target.parentElement; p; p = p.parentElement) {
    if (p.tagName === "DETAILS" && !p.open) { p.open = true; opened = true; }
  }
  if (opened) target.scrollIntoView();
}
window.addEventListener("hashchange", nadbookOpenTarget);
document.addEventListener("DOMContentLoaded", nadbookOpenTarget);
"""


def _mathjax_source():
    import mathjax  # the django-static-mathjax package: MathJax's es5 build as package data

    return Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"


def plotly_js_path():
    """Path of the `plotly.min.js` shipped with the installed plotly package."""
    import plotly

    path = Path(plotly.__file__).parent / "package_data" / PLOTLY_JS
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: reinstall plotly (it ships plotly.min.js in package_data)")
    return path


def _use_local_mathjax(app, config):
    config.mathjax_path = f"{MATHJAX_DIR}/tex-mml-chtml.js"


APPENDICES = {"nads_in_practice": "A", "provenance": "B"}   # appendix pages: "Figure A.3"


def number_by_chapter(app, env):
    """Number each chapter's figures and tables 1, 2, ... after its own number ("Figure 3.7" is the 7th
    figure of `book/03_nads`; an appendix's after its letter, `APPENDICES`), so that they read apart
    from the papers' "Fig. 1" to "Fig. 8". Sphinx numbers them through the whole book; this runs after
    it, on every build."""
    for docname, kinds in env.toc_fignumbers.items():
        chapter = re.match(r"(?:.*/)?(\d+)_", docname)
        prefix = int(chapter[1]) if chapter else APPENDICES.get(docname.rsplit("/", 1)[-1])
        for numbers in kinds.values():
            order = sorted(numbers, key=numbers.get)
            numbers.update({fig: (i + 1,) if prefix is None else (prefix, i + 1) for i, fig in enumerate(order)})
    return []


def units_on_the_numbers_line(app, doctree, docname):
    """Keep a "%" on the line of the number glued before it (myst-nb's `pasted-text`, after its glue is
    resolved): the space between them becomes a no-break space, so "68.7 %" never wraps after 68.7."""
    from docutils import nodes

    for number in list(doctree.findall(nodes.inline)):
        after = number.next_node(descend=False, siblings=True) if "pasted-text" in number["classes"] else None
        if isinstance(after, nodes.Text) and after.startswith(" %"):
            after.parent.replace(after, nodes.Text("\u00a0" + after[1:]))


def plotly_where_drawn(app, pagename, templatename, context, doctree):
    """Load plotly.min.js on a page whose body holds a Plotly figure (before require.js and the
    page's own scripts)."""
    if "plotly-graph-div" in context.get("body", ""):
        app.add_js_file(PLOTLY_JS, priority=200)


def copy_assets(app, exception):
    """After an HTML build, copy MathJax and plotly.min.js into the build's `_static` folder."""
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    if not (static / MATHJAX_DIR / "tex-mml-chtml.js").exists():
        shutil.copytree(_mathjax_source(), static / MATHJAX_DIR, dirs_exist_ok=True)
    shutil.copyfile(plotly_js_path(), static / PLOTLY_JS)
    (static / CSS).write_text(STYLE)
    (static / JS).write_text(SCRIPT)


def _author_year_style():
    """pybtex's unsrt style with labels "Author et al., 2020" (the text's author-year citations)."""
    from pybtex.richtext import Text
    from pybtex.style.formatting.unsrt import Style
    from pybtex.style.labels import BaseLabelStyle

    class Labels(BaseLabelStyle):
        def format_labels(self, sorted_entries):
            labels = [self._label(entry) for entry in sorted_entries]
            for i, label in enumerate(labels):             # two works of one label: 2021a, 2021b, in list order
                same = [j for j, other in enumerate(labels) if other == label]
                yield label + ("abcdefghij"[same.index(i)] if len(same) > 1 else "")

        @staticmethod
        def _label(entry):
            people = entry.persons.get("author") or entry.persons.get("editor") or []
            last = [Text.from_latex(" ".join(p.last_names)).render_as("text") for p in people]
            if last[-1:] == ["others"]:                    # "and others" in the .bib file
                last = last[:1] + ["", ""]
            who = (" and ".join(last) if len(last) <= 2 else f"{last[0]} et al.") or entry.key
            return f"{who}, {entry.fields.get('year', 'n.d.')}"

    class AuthorYear(Style):
        default_label_style = Labels

    return AuthorYear


def setup(app):
    from pybtex.plugin import register_plugin

    register_plugin("pybtex.style.formatting", "authoryear", _author_year_style(), force=True)
    plotly_js_path()  # fail early, at configuration time, if plotly is not installed
    app.connect("html-page-context", plotly_where_drawn)
    app.connect("doctree-resolved", units_on_the_numbers_line)
    app.add_css_file(CSS, priority=900)       # after myst-nb's stylesheet
    app.add_js_file(JS)
    app.connect("config-inited", _use_local_mathjax)
    app.connect("env-get-updated", number_by_chapter, priority=900)  # after Sphinx's own numbering (500)
    app.set_html_assets_policy("always")   # MathJax on every page: the sidebar's chapter titles hold math
    app.connect("build-finished", copy_assets)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
