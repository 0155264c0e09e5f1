"""`make pdf`: the whole book as one PDF, from the committed (already executed) notebooks.

Jupyter Book's single-page build (`_build/pdf/_build/singlehtml`, nothing executed), printed by Debian's
headless Chromium through Playwright (no browser download) once MathJax has typeset every formula and
every image and font has loaded. Each chapter starts a page; figures, tables and display math are never
split across pages.
"""

import argparse
import contextlib
import functools
import http.server
import subprocess
import sys
import threading
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build" / "pdf"
PDF = BUILD / "nadbook.pdf"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

PRINT_CSS = """
.bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-header-article, .bd-footer, .bd-footer-article,
.prev-next-area, .headerlink, .copybtn, .toggle-button, #pst-back-to-top, .skip-link { display: none !important; }
.bd-main, .bd-main .bd-content, .bd-article-container, .bd-article {
  max-width: 100% !important; padding: 0 !important; }
span[id^="document-"] + section { break-before: page; }
img, figure, tr, .cell_output, .plotly-graph-div, mjx-container[display="true"], .admonition { break-inside: avoid; }
h1, h2, h3, figcaption { break-after: avoid; }
img { max-width: 100% !important; height: auto !important; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; }
"""
READY = """async () => {
  document.querySelectorAll('img[loading="lazy"]').forEach(i => { i.loading = 'eager'; });
  if (window.MathJax && MathJax.startup) { await MathJax.startup.promise; await MathJax.typesetPromise(); }
  await Promise.all(Array.from(document.images).map(i => i.decode().catch(() => null)));
  await document.fonts.ready;
  return Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src);
}"""
FOOTER = ('<div style="font-size: 8px; width: 100%; text-align: center; color: #555">'
          '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')


def build_singlehtml():
    """The book as one HTML page, from the committed notebooks (execution off, warnings are errors)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config.setdefault("execute", {})["execute_notebooks"] = "off"
    sphinx = config.setdefault("sphinx", {})
    sphinx["local_extensions"] = {k: str(ROOT / v) for k, v in sphinx.get("local_extensions", {}).items()}
    BUILD.mkdir(parents=True, exist_ok=True)
    override = BUILD / "_config_noexec.yml"
    override.write_text(yaml.safe_dump(config))
    jb = Path(sys.executable).with_name("jupyter-book")
    subprocess.run([str(jb), "build", str(ROOT), "--builder", "singlehtml", "--path-output", str(BUILD),
                    "--config", str(override), "-W", "-n", "--keep-going"], check=True, cwd=ROOT)
    html = BUILD / "_build" / "singlehtml"
    # Sphinx writes the page as the root document (book/intro.html) with paths relative to the top folder,
    # and links within the page as links to that file: the page moves up, its links become anchors
    root = yaml.safe_load((ROOT / "_toc.yml").read_text())["root"]
    page = (html / f"{root}.html").read_text()
    (html / "nadbook.html").write_text(page.replace(f'href="{root}.html#', 'href="#'))
    return html


@contextlib.contextmanager
def serve(folder):
    """`folder` served on 127.0.0.1 (MathJax loads its fonts and components over http)."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


def print_pdf(html, out):
    """Print `html/nadbook.html` to `out` (A4, page numbers, the headings as the PDF's outline)."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise SystemExit(f"make pdf needs Chromium at {CHROMIUM} (apt-get install chromium; `make browser` does)")
    with serve(html) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1600})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith((url, "data:")) else r.abort())
        page.goto(f"{url}nadbook.html", wait_until="networkidle")
        page.add_style_tag(content=PRINT_CSS)
        broken = page.evaluate(READY)
        if broken:
            raise SystemExit(f"images that did not load: {broken}")
        out.parent.mkdir(parents=True, exist_ok=True)
        page.pdf(path=str(out), format="A4", print_background=True, outline=True, tagged=True,
                 margin={"top": "16mm", "bottom": "16mm", "left": "14mm", "right": "14mm"},
                 display_header_footer=True, header_template="<div></div>", footer_template=FOOTER)
        browser.close()
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=PDF, help=f"the PDF to write (default: {PDF.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    out = print_pdf(build_singlehtml(), args.out)
    print(f"{out} ({out.stat().st_size / 2**20:.1f} MiB)")


if __name__ == "__main__":
    main()
