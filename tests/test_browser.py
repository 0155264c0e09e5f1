"""The built HTML in headless Chromium: every page of `_toc.yml` renders its figures and math with
no request outside localhost. Screenshots land in `_build/screenshots/` (CI artifacts)."""

import nbformat
import pytest
from conftest import ROOT
from test_book import toc_files

SHOTS = ROOT / "_build" / "screenshots"
BROKEN_IMAGES = "Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"


def expected_images(page_file):
    """How many images the committed outputs of a chapter hold (each becomes an <img>)."""
    path = ROOT / f"{page_file}.ipynb"
    if not path.exists():
        return 0
    nb = nbformat.read(path, as_version=4)
    return sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)


@pytest.mark.browser
@pytest.mark.parametrize("page_file", toc_files())
def test_page_renders_offline(book_url, page, page_file):
    response = page.goto(f"{book_url}{page_file}.html", wait_until="networkidle")
    assert response is not None and response.ok, f"{page_file}.html is missing from the build"
    page.wait_for_timeout(300)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{page_file.split('/')[-1]}.png"), full_page=True)

    assert page.evaluate(BROKEN_IMAGES) == []
    rendered = page.evaluate("document.querySelectorAll('main img').length")
    assert rendered >= expected_images(page_file)
    if page.evaluate("document.querySelectorAll('main .math').length") > 0:
        page.wait_for_function("document.querySelectorAll('mjx-container').length > 0", timeout=20000)
    assert page.external_requests == [], "the page needs requests outside localhost"
    assert page.locator("main h1").count() >= 1
