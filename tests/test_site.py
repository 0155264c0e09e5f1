"""The built site as it is published: every reference of every page resolves (offline), the site works
when served from a sub-path (`/nadbook/`, as GitHub Pages serves a project) in headless Chromium, and
`make pdf` prints the whole book with every chapter."""

import functools
import http.server
import re
import subprocess
import sys
import threading
import unicodedata
from html.parser import HTMLParser
from urllib.parse import unquote, urldefrag, urlparse

import pytest
from conftest import ROOT, _QuietHandler, built_site
from test_book import toc_files
from test_browser import check_chapter_page, check_reads_as_a_book, check_renders, save_screenshot

SUB = "nadbook"
PAGES = [*toc_files(), "genindex", "search"]
# sphinx-thebe 0.3.1 (Jupyter Book's) adds its inline configuration script twice under Sphinx 7: the second
# copy redeclares the same constants and fails, harmlessly. Every other script error fails the test.
UPSTREAM_ERRORS = {"Identifier 'THEBE_JS_URL' has already been declared"}
REFERENCES = {"a": "href", "link": "href", "img": "src", "script": "src", "source": "src", "iframe": "src"}


@pytest.fixture(scope="module")
def site():
    """`_build/html` (built from the committed notebooks if missing), the folder every check reads."""
    return built_site()


# ----------------------------------------------------------------------------- references, offline

class _Page(HTMLParser):
    """The ids of a page and what it refers to (links, stylesheets, scripts, images, srcset entries)."""

    def __init__(self):
        super().__init__()
        self.ids, self.refs = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.ids.update(a[k] for k in ("id", "name") if a.get(k))
        if a.get(REFERENCES.get(tag, "")):
            self.refs.append(a[REFERENCES[tag]])
        if a.get("srcset"):
            self.refs += [entry.split()[0] for entry in a["srcset"].split(",") if entry.strip()]


def broken_references(html):
    """`[]` when every internal reference of every page of `html` resolves: the file, and its anchor."""
    pages = [p.resolve() for p in sorted(html.rglob("*.html"))
             if not p.relative_to(html).parts[0].startswith("_")]     # not _static/ (MathJax's own), _sources/
    broken = []
    for path in pages:
        for ref in _read(path).refs:
            if urlparse(ref).scheme or ref.startswith("//"):       # http:, mailto:, data:, javascript:
                continue
            target, anchor = urldefrag(ref)
            target = target.split("?")[0]
            file = (path.parent / unquote(target)).resolve() if target else path
            name = path.relative_to(html.resolve())
            if not file.exists():
                broken.append(f"{name}: {ref} (no such file)")
            elif anchor and file.suffix == ".html" and anchor not in _read(file).ids:
                broken.append(f"{name}: {ref} (no such anchor)")
    return broken


@functools.cache
def _read(file):
    page = _Page()
    page.feed(file.read_text())
    return page


def test_broken_references_finds_what_is_broken(tmp_path):
    (tmp_path / "a.html").write_text('<p id="top"><a href="b.html#x">b</a><img src="_images/f.png">'
                                     '<link rel="stylesheet" href="_static/s.css?v=1"><a href="#top">up</a>'
                                     '<img srcset="f.png 1x, g.png 2x"><a href="https://example.org/#n">out</a>')
    (tmp_path / "b.html").write_text('<h1 id="y">B</h1><script src="c.js"></script>')
    (tmp_path / "f.png").write_bytes(b"")
    assert broken_references(tmp_path) == ["a.html: b.html#x (no such anchor)", "a.html: _images/f.png (no such file)",
                                           "a.html: _static/s.css?v=1 (no such file)", "a.html: g.png (no such file)",
                                           "b.html: c.js (no such file)"]


def test_every_reference_of_the_site_resolves(site):
    """Links with their anchors, stylesheets, scripts and images of every page (genindex and search too)."""
    assert broken_references(site) == []


def test_figures_are_numbered_by_chapter(site):
    """Each chapter numbers its figures "Figure <chapter>.1", ".2", ... in page order (book/_ext), an
    appendix "Figure A.1", ..., so a book figure never reads like one of the papers' "Fig. 1" to "Fig. 8"."""
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    from nadbook_sphinx import APPENDICES

    for page in toc_files():
        chapter = re.match(r"(?:.*/)?(\d+)_", page)
        prefix = int(chapter[1]) if chapter else APPENDICES.get(page.rsplit("/", 1)[-1])
        numbers = re.findall(r'class="caption-number">([^<]*)<', (site / f"{page}.html").read_text())
        if prefix is not None:
            assert numbers and numbers == [f"Figure {prefix}.{i} " for i in range(1, len(numbers) + 1)], page
        else:
            assert not numbers, f"{page} numbers figures that read like the papers' ({numbers[:2]})"


def test_references_are_listed_as_the_text_cites_them(site):
    """The bibliography labels each entry "Author et al., year", as the text's author-year citations
    read (book/_ext), with LaTeX accents decoded; two works of one label are 2021a and 2021b, in the list and
    in the text (cited by `{cite:label}`)."""
    html = (site / "book" / "references.html").read_text()
    labels = re.findall(r'class="label"><span class="fn-bracket">\[</span>(.*?)<span', html)
    assert labels and "Ortiz-Jiménez et al., 2020" in labels
    assert all(re.fullmatch(r"[^{}\\]+(?: et al\.| and [^{}\\,]+)?, \d{4}[a-z]?", label) for label in labels), labels
    if "Ortiz-Jiménez et al., 2021b" in labels:
        assert "2021a" in (site / "book" / "intro.html").read_text()
        assert "2021b" in (site / "book" / "08_training.html").read_text()


# ----------------------------------------------------------------------------- served under /nadbook/

@pytest.fixture(scope="module")
def sub_url(site, tmp_path_factory):
    """The site served at http://127.0.0.1:PORT/nadbook/ (a server whose root holds only `nadbook/`)."""
    root = tmp_path_factory.mktemp("pages")
    (root / SUB).symlink_to(site, target_is_directory=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/{SUB}/"
    server.shutdown()


@pytest.fixture
def sub_page(browser, sub_url):
    """A page that aborts every request outside the sub-path and records it, every response >= 400 and
    every uncaught script error (`page.outside`, `page.failed`, `page.errors`)."""
    context = browser.new_context(viewport={"width": 1280, "height": 1600})
    pg = context.new_page()
    pg.outside, pg.failed, pg.errors = [], [], []

    def route(r):
        url = r.request.url
        if url.startswith((sub_url, "data:", "blob:", "about:")):
            r.continue_()
        else:
            pg.outside.append(url)
            r.abort()

    pg.route("**/*", route)
    pg.on("response", lambda resp: resp.status >= 400 and pg.failed.append(f"{resp.status} {resp.url}"))
    pg.on("pageerror", lambda err: str(err) in UPSTREAM_ERRORS or pg.errors.append(str(err)))
    yield pg
    context.close()


STYLED = """() => ({
  sheets: Array.from(document.querySelectorAll('link[rel=stylesheet]'))
    .filter(l => !l.sheet || l.sheet.cssRules.length === 0).map(l => l.href),
  theme: getComputedStyle(document.documentElement).getPropertyValue('--pst-color-primary').trim(),
  script: document.documentElement.dataset.theme,
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href)
    .filter(h => h.startsWith(location.origin) && !h.startsWith(location.origin + '/SUB/')),
})""".replace("SUB", SUB)


@pytest.mark.browser
@pytest.mark.parametrize("page_file", PAGES)
def test_page_works_under_a_sub_path(sub_url, sub_page, page_file):
    """No request leaves `/nadbook/` or fails, the theme's stylesheets and scripts apply, no script
    raises, no link points outside the sub-path, MathJax typesets; a page of `_toc.yml` also passes
    the reader's checks of `tests/test_browser.py` (each page is loaded once by the suite)."""
    response = sub_page.goto(f"{sub_url}{page_file}.html", wait_until="networkidle")
    assert response is not None and response.ok
    if sub_page.evaluate("document.querySelectorAll('main .math').length") > 0:
        sub_page.wait_for_function("document.querySelectorAll('main mjx-container').length > 0", timeout=20000)
    # The theme's script sets `data-theme` on `load`, which a busy machine may reach after the network is idle.
    sub_page.wait_for_function("['light', 'dark'].includes(document.documentElement.dataset.theme)", timeout=20000)
    state = sub_page.evaluate(STYLED)
    assert sub_page.outside == [], "requests outside the sub-path"
    assert sub_page.failed == [], "requests that failed"
    assert sub_page.errors == [], "script errors"
    assert state["sheets"] == [], "stylesheets that did not load"
    assert state["theme"] and state["script"] in ("light", "dark"), "the theme's stylesheet or script did not apply"
    assert state["links"] == [], "links that leave the sub-path"
    if page_file in toc_files():       # what a reader sees (tests/test_browser.py), from this one load
        check_walks_on(sub_page, sub_url, page_file)
        check_renders(sub_page, page_file)
        check_reads_as_a_book(sub_page, page_file)
        check_chapter_page(sub_page, page_file)
        save_screenshot(sub_page, page_file)


def hidden_cited_figures():
    """`(page, label)` of each figure that a chapter's visible prose cites ({numref}) while the figure sits
    in a hidden cell output (`hide-output` / `hide-cell`)."""
    import nbformat

    found = []
    for page in toc_files():
        path = ROOT / f"{page}.ipynb"
        if not path.exists():
            continue
        nb = nbformat.read(path, as_version=4)
        hidden = {c.metadata.get("mystnb", {}).get("figure", {}).get("name") for c in nb.cells
                  if {"hide-output", "hide-cell"} & set(c.metadata.get("tags", []))} - {None}
        prose = " ".join(c.source for c in nb.cells if c.cell_type == "markdown")
        found += [(page, label) for label in sorted(hidden) if f"`{label}`" in prose]
    return found


@pytest.mark.browser
def test_a_link_to_a_hidden_figure_opens_it(sub_url, sub_page):
    """A {numref} link to a figure in a hidden cell output (closed by default) opens it (book/_ext's
    `nadbook.js`), so every cited figure is one click away."""
    cited = hidden_cited_figures()
    assert cited, "no chapter cites a hidden figure: pick another test"
    page, label = cited[0]
    sub_page.goto(f"{sub_url}{page}.html", wait_until="networkidle")
    visible = f"document.getElementById('{label}').checkVisibility()"
    # the theme's scripts may still be wrapping the hidden outputs after the network is idle: wait for the figure
    sub_page.wait_for_function(f"document.getElementById('{label}') !== null", timeout=10000)
    assert not sub_page.evaluate(visible), f"{label} on {page} is not hidden by default"
    sub_page.goto(f"{sub_url}{page}.html#{label}", wait_until="networkidle")
    sub_page.wait_for_function(visible, timeout=10000)


def check_walks_on(sub_page, sub_url, page_file):
    """The page's "next" button leads to the next page of `_toc.yml` (none on the last), and its sidebar
    links every page under the sub-path: with the root's redirect, the buttons walk the whole book."""
    pages = toc_files()
    i = pages.index(page_file)
    following = sub_page.evaluate("Array.from(document.querySelectorAll('a.right-next')).map(a => a.href)")
    assert following == ([f"{sub_url}{pages[i + 1]}.html"] if i + 1 < len(pages) else []), "the next button"
    sidebar = sub_page.evaluate("Array.from(document.querySelectorAll('.bd-sidebar-primary a.reference.internal'))"
                                ".map(a => a.href.split('#')[0])")
    assert {f"{sub_url}{p}.html" for p in pages} <= {*sidebar, sub_page.url}, "the sidebar"


@pytest.mark.browser
def test_the_root_leads_to_the_first_page(sub_url, sub_page):
    """`/nadbook/` redirects to the first page of `_toc.yml`; from there each page's next button
    (`check_walks_on`, on every page's one load) leads through the book in order."""
    sub_page.goto(sub_url)
    sub_page.wait_for_url(f"{sub_url}{toc_files()[0]}.html")
    assert sub_page.failed == [] and sub_page.outside == [] and sub_page.errors == []


# ----------------------------------------------------------------------------- make pdf

def chapter_titles():
    """The title (first `# ` heading) of each page of `_toc.yml`."""
    import nbformat

    titles = []
    for page in toc_files():
        md = ROOT / f"{page}.md"
        text = md.read_text() if md.exists() else "\n".join(
            c.source for c in nbformat.read(ROOT / f"{page}.ipynb", as_version=4).cells if c.cell_type == "markdown")
        titles.append(next(line[2:].strip() for line in text.splitlines() if line.startswith("# ")))
    return titles


def _squash(text):
    """Text compared without spacing or ligatures (PDF text breaks lines and joins 'f' + 'l')."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


@pytest.mark.browser
@pytest.mark.slow
def test_make_pdf_holds_every_chapter(browser, tmp_path):
    """tools/book_pdf.py (`make pdf`) writes one PDF whose outline lists every chapter in book order,
    each chapter's title in its text and starting a page of its own."""
    from pypdf import PdfReader

    out = tmp_path / "nadbook.pdf"
    subprocess.run([sys.executable, str(ROOT / "tools" / "book_pdf.py"), "--out", str(out)], check=True,
                   capture_output=True, cwd=ROOT)
    reader = PdfReader(out)

    def flat(items):
        return [x for item in items for x in (flat(item) if isinstance(item, list) else [item])]

    outline = [(_squash(i.title), reader.get_destination_page_number(i), i.top) for i in flat(reader.outline)]
    titles = [_squash(t) for t in chapter_titles()]
    found = [next(((page, top) for t, page, top in outline if t.startswith(title)), None) for title in titles]
    assert None not in found, f"chapters missing from the PDF's outline: {[t for t, f in zip(titles, found) if not f]}"
    pages = [page for page, _ in found]
    assert pages == sorted(set(pages)), "chapters out of order, or two on one page"
    for title, (page, top) in zip(titles, found):
        height = float(reader.pages[page].mediabox.height)
        assert top > 0.85 * height, f"{title} does not start page {page + 1}"
        assert title in _squash(reader.pages[page].extract_text())
    assert len(reader.pages) > 4 * len(titles)
