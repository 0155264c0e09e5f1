"""Shared fixtures: the repository root, a served copy of the built book, a headless Chromium page."""

import datetime
import fcntl
import functools
import http.server
import os
import random
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
# The seed of the tests' random draws (which stored cell a recomputation test takes, which minute-long
# recomputation `make test` runs): by default the day (UTC), so that the draws, and every minute-long
# recomputation, come round across days' runs (issue 59: a fixed 0 always drew the same one); printed in
# pytest's header, and NADBOOK_DRAW_SEED=N repeats a run's draws to reproduce a failure.
DRAW_SEED = int(os.environ.get("NADBOOK_DRAW_SEED") or datetime.datetime.now(datetime.UTC).date().toordinal())


# A stored trained cell is replayed for its first REPLAY_STEPS SGD steps (its loss history, bitwise),
# or to the end with --full-replay (a VGG-11 cell: 20-70 min of this CPU).
REPLAY_STEPS = 20


def pytest_addoption(parser):
    parser.addoption("--full-replay", action="store_true",
                     help="recompute drawn stored cells to the end (`make verify`), not their first steps")


# The recomputations that take a minute or more each here (a whole training; a deep network's 2,048
# probes through torch.compile): `make test` runs the one drawn with NADBOOK_DRAW_SEED, `make verify`
# (--full-replay) every one.
MINUTE_LONG = ("whole_run", "precision_check", "vgg11_chunk", "gpu_estimate")


def drawn_minute_long():
    return random.Random(f"{DRAW_SEED}:minute-long").choice(MINUTE_LONG)


# NADBOOK_TEST_ORDER=N runs the tests in an order shuffled by seed N (the files, then the tests within each
# file; a notebook's cells keep theirs): a test that passes only after another one fails under some N (issue 62).
TEST_ORDER = os.environ.get("NADBOOK_TEST_ORDER")


def pytest_collection_modifyitems(items):
    """A notebook's cells (nbval) are slow tests: `make test` executes each chapter once, `make check` none.
    With NADBOOK_TEST_ORDER set, the order is shuffled (`TEST_ORDER`)."""
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.slow)
    if TEST_ORDER is not None:
        draw = random.Random(f"{TEST_ORDER}:order")
        files: dict[Path, list] = {}
        for item in items:
            files.setdefault(item.path, []).append(item)
        order = list(files)
        draw.shuffle(order)
        for path in order:
            if path.suffix != ".ipynb":
                draw.shuffle(files[path])
        items[:] = [item for path in order for item in files[path]]


def pytest_report_header(config):
    order = f"; tests in the order of NADBOOK_TEST_ORDER={TEST_ORDER}" if TEST_ORDER is not None else ""
    return _draws_header(config) + order


def _draws_header(config):
    if config.getoption("--full-replay"):
        return f"random draws of stored results: NADBOOK_DRAW_SEED={DRAW_SEED}; trained cells replayed to the end"
    return (f"random draws of stored results: NADBOOK_DRAW_SEED={DRAW_SEED}; trained cells replayed for their first "
            f"{REPLAY_STEPS} steps; of the minute-long recomputations, {drawn_minute_long()}")


@pytest.fixture
def replay(request):
    """The SGD steps a recomputation test replays of a stored trained cell (None: all of them)."""
    return None if request.config.getoption("--full-replay") else REPLAY_STEPS


@pytest.fixture
def minute_long(request):
    """`minute_long(kind)` skips the test unless it is `make verify` or `kind` is the drawn one."""
    def check(kind):
        assert kind in MINUTE_LONG, kind
        if not request.config.getoption("--full-replay") and kind != drawn_minute_long():
            pytest.skip(f"`make test` runs one minute-long recomputation, drawn: {drawn_minute_long()} "
                        "(`make verify` every one)")
    return check


@pytest.fixture
def rng(request):
    """A `random.Random` of this test's own, seeded by `DRAW_SEED` and the test's name (its draws
    do not depend on which other tests ran)."""
    return random.Random(f"{DRAW_SEED}:{request.node.name}")


@pytest.fixture(scope="session")
def root():
    return ROOT


def build_book_from_committed_outputs():
    """Build `_build/html` from the committed (already executed) notebooks, without executing them."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config.setdefault("execute", {})["execute_notebooks"] = "off"
    local = config.get("sphinx", {}).get("local_extensions", {})   # paths are read relative to the config file
    config.get("sphinx", {})["local_extensions"] = {name: str(ROOT / path) for name, path in local.items()}
    override = ROOT / "_build" / "_config_noexec.yml"
    override.parent.mkdir(exist_ok=True)
    override.write_text(yaml.safe_dump(config))
    jb = Path(sys.executable).with_name("jupyter-book")
    subprocess.run([str(jb), "build", str(ROOT), "--config", str(override), "-W", "-n", "--keep-going"], check=True,
                   cwd=ROOT)   # warnings are errors, as in `make book`


def built_site():
    """`_build/html`, built from the committed notebooks if missing: by one of the parallel workers (pytest-xdist)
    while the others wait."""
    HTML.parent.mkdir(exist_ok=True)
    with open(HTML.parent / ".site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (HTML / "index.html").exists():
            build_book_from_committed_outputs()
    return HTML


@pytest.fixture(scope="session")
def book_url():
    """Serve `_build/html` on 127.0.0.1 (building it from the committed notebooks if missing)."""
    built_site()
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def browser():
    """Debian's headless Chromium driven by Playwright (no browser download)."""
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail("Chromium is missing: install Debian's package `chromium` (the CI script does)")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=args)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh page that aborts every request outside localhost and lists them in `page.external_requests`."""
    context = browser.new_context(viewport={"width": 1280, "height": 1600})
    pg = context.new_page()
    pg.external_requests = []

    def route(r):
        host = urlparse(r.request.url).hostname or ""
        if r.request.url.startswith(("data:", "blob:", "about:")) or host in LOCAL_HOSTS:
            r.continue_()
        else:
            pg.external_requests.append(r.request.url)
            r.abort()

    pg.route("**/*", route)
    yield pg
    context.close()


@pytest.fixture(autouse=True)
def bundle_writes_stay_in_their_test(monkeypatch):
    """`--force` lets this process write into the committed bundle (NADBOOK_WRITE_BUNDLE): only for its test."""
    monkeypatch.setenv("NADBOOK_WRITE_BUNDLE", "0")


@pytest.fixture(autouse=True)
def figures_are_readable():
    """Every figure a test draws must read at the book's width (`nadcore.plots.style.check_readable`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from nadcore.plots import style

    plt.close("all")
    yield
    try:
        for num in plt.get_fignums():
            style.check_readable(plt.figure(num))
    finally:
        plt.close("all")


def estimate_kw(model, num_networks, **kw):
    """`nads.estimate` with its settings and its run's options as keywords alike (the tests' shorthand for
    `nads.estimate(model, nads.EstimateSettings(num_networks=..., method=...), device=..., ...)`): the fields of
    `EstimateSettings` go into the settings, `shard` and `num_shards` into the pair `shard`, the rest to
    `estimate` as they are."""
    import dataclasses

    from nadcore import nads

    fields = {f.name for f in dataclasses.fields(nads.EstimateSettings)}
    settings = nads.EstimateSettings(num_networks=num_networks, **{k: v for k, v in kw.items() if k in fields})
    run = {k: v for k, v in kw.items() if k not in fields and k not in ("shard", "num_shards")}
    if "shard" in kw or "num_shards" in kw:
        run["shard"] = (kw.get("shard", 0), kw.get("num_shards", 1))
    return nads.estimate(model, settings, **run)


# ----------------------------------------------------------------------------- the committed bundle, read once a module
# (tests/test_snapshot.py pins its numbers; tests/test_verdicts.py reads it beside its synthetic inputs)

@pytest.fixture(scope="module")
def comparison():
    from nadcore import bundle

    return bundle.fig1_comparison(ROOT / "bundle")[0]


@pytest.fixture(scope="module")
def stored():
    from nadcore import bundle

    return bundle.stored_nads(bundle_dir=ROOT / "bundle")


@pytest.fixture(scope="module")
def overlaps():
    from nadcore import bundle, verdicts

    return bundle.nad_overlaps(verdicts.OVERLAP_KS, ROOT / "bundle")


@pytest.fixture(scope="module")
def fig6():
    from nadcore import bundle

    return bundle.fig6_comparison(ROOT / "bundle")


@pytest.fixture(scope="module")
def fig6_nads():
    from nadcore import bundle

    return {name: bundle.load_fig6(ROOT / "bundle", name=name) for name in bundle.FIG6_NADS}


@pytest.fixture(scope="module")
def pairs():
    from nadcore import bundle

    return {a: bundle.underspec("pairs", a, ROOT / "bundle", progress=False) for a in bundle.UNDERSPEC_ARCHS}
