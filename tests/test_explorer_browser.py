"""The static gamma(l) explorer works in the built HTML book, in headless Chromium, with no network."""

import pytest

pytestmark = pytest.mark.browser

TRACES = "() => document.getElementById('nad-gamma-explorer').data.map(t => Array.from(t.y))"
TITLE = "() => document.getElementById('nad-gamma-explorer').layout.title.text"


def _open_explorer(page, book_url):
    page.goto(book_url + "book/02_pooling.html")
    page.wait_for_function("() => { const gd = document.getElementById('nad-gamma-explorer');"
                           " return gd && gd.data && gd.querySelector('.main-svg'); }", timeout=30000)
    return page.evaluate(TRACES)


def test_explorer_renders_offline_and_a_button_changes_the_plot(page, book_url):
    before = _open_explorer(page, book_url)
    assert len(before) == 2 and len(before[0]) == 128
    assert page.locator("#nad-gamma-explorer .scatterlayer path.js-line").count() == 2
    path_before = page.locator("#nad-gamma-explorer .scatterlayer path.js-line").first.get_attribute("d")

    page.locator("#nad-gamma-explorer g.updatemenu-button", has_text="gaussian").click()
    page.wait_for_function(TITLE + ".startsWith('prefilter=gaussian')", timeout=10000)
    after = page.evaluate(TRACES)
    assert after[0] != before[0] and after[1] != before[1]
    assert page.locator("#nad-gamma-explorer .scatterlayer path.js-line").first.get_attribute("d") != path_before
    assert page.external_requests == []  # Plotly (and MathJax) come from the book itself


def test_explorer_slider_changes_S(page, book_url):
    before = _open_explorer(page, book_url)
    # the first slider is S (steps 1, 2, 4, 8, 16): click its rail above the tick label of S = 8
    slider = page.locator("#nad-gamma-explorer g.slider-group", has_text="S = ")
    slider.scroll_into_view_if_needed()
    label = slider.locator("g.slider-label-group", has_text="8").first.bounding_box()
    rail = slider.locator("rect.slider-rail-touch-rect").bounding_box()
    page.mouse.click(label["x"] + label["width"] / 2, rail["y"] + rail["height"] / 2)
    page.wait_for_function(TITLE + ".includes('S=8')", timeout=10000)
    after = page.evaluate(TRACES)
    assert after[0] != before[0]
