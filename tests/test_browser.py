"""What a reader sees of each page of `_toc.yml` in headless Chromium: its figures and math render,
it reads as a book (no raw markup, nothing cut off), a chapter's main page is short and its prose
free of engineering. `tests/test_site.py` loads each page once and calls these checks; screenshots
land in `_build/screenshots/` (CI artifacts)."""

import nbformat
from conftest import ROOT

SHOTS = ROOT / "_build" / "screenshots"
BROKEN_IMAGES = "Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"


def expected_images(page_file):
    """How many images the committed outputs of a chapter hold (each becomes an <img>)."""
    path = ROOT / f"{page_file}.ipynb"
    if not path.exists():
        return 0
    nb = nbformat.read(path, as_version=4)
    return sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def check_renders(page, page_file):
    """A loaded page of `_toc.yml` (`tests/test_site.py` loads each once): every image loaded, at least
    as many as its committed outputs hold, MathJax typeset, a title."""
    assert page.evaluate(BROKEN_IMAGES) == []
    rendered = page.evaluate("document.querySelectorAll('main img').length")
    assert rendered >= expected_images(page_file)
    if page.evaluate("document.querySelectorAll('main .math').length") > 0:
        page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=20000)
        page.evaluate("async () => { await MathJax.startup.promise; }")
        page.wait_for_function("document.querySelectorAll('mjx-container').length > 0", timeout=20000)
    assert page.locator("main h1").count() >= 1


def save_screenshot(page, page_file):
    """A full-page screenshot in `SHOTS`, taken after the checks: it resizes the window, and plotly's
    figures lay themselves out again for a moment."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{page_file.split('/')[-1]}.png"), full_page=True)


# ----------------------------------------------------------------------------- the page as a reader sees it

def text_without(selectors):
    """JavaScript giving the text of the page's `main` with the elements `selectors` matches removed."""
    return f"""() => {{
  const main = document.querySelector('main').cloneNode(true);
  main.querySelectorAll('{selectors}').forEach(e => e.remove());
  return main.innerText;
}}"""


PROSE = text_without("pre, code, mjx-container, .math, script, style, .highlight, .plotly-graph-div, .headerlink, "
                     ".toggle-details, nav, .cell_input")
CAPTIONS = "Array.from(document.querySelectorAll('main figcaption, main caption')).map(c => c.innerText.trim())"
CUT_OFF = """Array.from(document.querySelectorAll('main pre, main .cell_output, main .output, main table, main img'))
  .filter(e => e.checkVisibility())
  .filter(e => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right
               > document.querySelector('main').getBoundingClientRect().right + 1)
  .map(e => e.tagName + ': ' + (e.innerText || e.src || '').slice(0, 60))"""
CITATIONS = "Array.from(document.querySelectorAll('main .citation p')).map(c => c.innerText.trim())"

RAW = {
    "raw LaTeX": r"\\[A-Za-z]+|\$[^$\s][^$]*\$",
    "raw markdown": r"\*\*|`|\{(?:glue|cite|doc|ref|numref|math|eq)[:}]|^\s*(?::::|```)|\]\(",
    "ASCII math": r"\b[A-Za-z]_[A-Za-z0-9{]|\s(?:<=|>=)\s|\b(?:lambda|zeta|gamma|sigma|epsilon)\b",
}
DOUBLE_NUMBER = r"^(?:Fig(?:ure)?\.?|Table)\s*\d+(?:\.\d+)*\.?\s*(?:Fig(?:ure)?\.?|Table)\s*\d"


def reader_defects(text, captions, cut_off, citations):
    """What a reader would see wrong on a page: raw LaTeX or markdown, ASCII math, a caption numbered
    twice, output cut off at the right edge, a reference listed twice. `[]` when the page is clean."""
    import re

    found = []
    for what, pattern in RAW.items():
        for line in text.splitlines():
            m = re.search(pattern, line, flags=re.M)
            if m:
                found.append(f"{what} {m.group(0)!r} in: {line.strip()[:100]}")
    found += [f"caption numbered twice: {c[:80]}" for c in captions if re.match(DOUBLE_NUMBER, c)]
    found += [f"cut off at the right edge: {c}" for c in cut_off]
    found += [f"reference listed twice: {c[:80]}" for c in sorted(set(citations)) if citations.count(c) > 1]
    return found


def test_reader_defects_finds_what_a_reader_would_see():
    assert reader_defects("Fine prose, 95.2 % on $D$.\nA list: 1. one", [], [], []) == ["raw LaTeX '$D$' in: "
                                                                                         "Fine prose, 95.2 % on $D$."]
    assert reader_defects(r"an explorer of \gamma(\ell)", [], [], [])
    assert reader_defects("see **this**", [], [], []) and reader_defects("{glue:text}`x`", [], [], [])
    assert reader_defects("accuracy on D(v_l) for every l", [], [], [])
    assert reader_defects("with sigma = 3", [], [], []) and reader_defects("when k <= 4 here", [], [], [])
    assert reader_defects("", ["Fig. 8 Fig. 4a: Bayes accuracy"], [], [])
    assert reader_defects("", ["Figure 4.2 Fig. 4a: Bayes accuracy"], [], [])
    assert not reader_defects("", ["Fig. 8 Bayes accuracy as in the paper's Fig. 4a"], [], [])
    assert reader_defects("", [], ["PRE: variant cells mean"], [])
    assert reader_defects("", [], [], ["Zhang. Making CNNs shift-invariant.", "Zhang. Making CNNs shift-invariant."])
    assert not reader_defects("Plain prose with numbers 0.56 and 51.1 %.", ["Fig. 1 Test accuracy."], [], ["a", "b"])


def check_reads_as_a_book(page, page_file):
    """No raw LaTeX or markdown (the sidebar's chapter titles too), no ASCII math, no caption numbered
    twice, no output cut off at the right edge of a 1280 px window, no reference listed twice (in
    what the page shows with its dropdowns closed)."""
    sidebar = page.evaluate("(document.querySelector('.bd-sidebar-primary') || {innerText: ''}).innerText")
    defects = reader_defects(page.evaluate(PROSE) + "\n" + sidebar, page.evaluate(CAPTIONS), page.evaluate(CUT_OFF),
                             page.evaluate(CITATIONS))
    assert defects == [], f"{page_file}:\n" + "\n".join(defects)


# ----------------------------------------------------------------------------- a chapter's main page

MAX_HEIGHT = 6400   # px at 1280 px wide with every dropdown closed: 8 screens of 1280x800
CHAPTER = r"book/\d\d_"   # the chapters' main pages (the appendices and the results page are exempt)
ENGINEERING = r"\b(?:bundles?|machines?|threads?|shards?|make (?:book|test|check|fashion|install|verify|pdf))\b"
VISIBLE_PROSE = text_without("details, pre, code, .cell_input, .cell_output, mjx-container, .math, script, style, "
                             "nav, .headerlink")


def engineering_words(text):
    """The words of engineering in a chapter's prose (the results bundle, machines, threads, shards,
    make targets), each once, sorted."""
    import re

    return sorted({m.group(0).lower() for m in re.finditer(ENGINEERING, text, flags=re.I)})


def test_engineering_words_finds_plumbing_in_prose():
    assert engineering_words("Stored in the results bundle; run make fashion on a machine") == [
        "bundle", "machine", "make fashion"]
    assert engineering_words("Two shards and 2 threads") == ["shards", "threads"]
    assert engineering_words("We make a grid of machined parts; the bundled NADs") == []


def check_chapter_page(page, page_file):
    """A chapter's main page at most `MAX_HEIGHT` px tall with its dropdowns closed, and no engineering
    in the prose a reader sees (dropdowns, code and outputs excepted)."""
    import re

    if not re.match(CHAPTER, page_file):
        return
    page.evaluate("document.querySelectorAll('details[open]').forEach(d => d.open = false)")
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height <= MAX_HEIGHT, f"{page_file} is {height} px tall ({height / 800:.1f} screens of 800 px)"
    assert engineering_words(page.evaluate(VISIBLE_PROSE)) == [], page_file
