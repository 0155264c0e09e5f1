"""Appendix B, "Where every number comes from": the stored records behind each page (issue 38).

`nadcore.provenance` finds them by watching what each bundle item's status reads; these tests
give it a small stand-in bundle whose readers are known, and check it against the real bundle's
cheapest items."""

import numpy as np
import pytest
import yaml
from conftest import ROOT

from nadcore import bundle, chapters, provenance, store
from nadcore.plots import provenance as tables
from nadcore.plots import style


def _cell(arch, kx, sigma, seed=0, pooling=True):
    return {"cell": {"arch": arch, "kx": kx, "ky": 0, "pooling": pooling},
            "settings": {"n": 1000, "sigma": sigma, "epochs": {"lenet": 20, "logreg": 5}, "seed": seed}}


NADS = {"arch": "mlp", "method": "autograd", "num_networks": 100, "seed": 0}


@pytest.fixture
def stand_in(tmp_path):
    """A bundle of five results and three items: `grid` reads its two cells, `nads` its estimate,
    `study` all three (the grid's cells are its inputs) and a third cell at another sigma."""
    paths = {}
    for name, settings, device, seconds in (
            ("a", _cell("lenet", 1, 3.0), "cpu", 10.0), ("b", _cell("lenet", 2, 3.0), "cpu", 20.0),
            ("c", _cell("lenet", 1, 1.5, seed=7), "cpu", 30.0), ("n", NADS, "cuda", 40.0),
            ("x", _cell("logreg", 1, 3.0), "cpu", 1.0)):
        paths[name] = tmp_path / f"{name}.npz"
        store.save(paths[name], {"v": np.zeros(1)}, settings, device=device, duration=seconds)
    reads = {"grid": ["a", "b"], "nads": ["n"], "study": ["a", "b", "c"], "unread": []}
    settings = {"a": _cell("lenet", 1, 3.0), "b": _cell("lenet", 2, 3.0), "c": _cell("lenet", 1, 1.5, seed=7),
                "n": NADS}

    def status(item):
        for name in reads[item]:
            assert store.matches(paths[name], settings[name])   # as the bundle's readers do
        store.matches(paths["x"], _cell("lenet", 9, 3.0))         # other settings: not read
        if item == "unread":
            return f"{item}: 0 of 4; `python -m nadcore.bundle unread` computes the rest"
        return f"{item}: stored"

    read = provenance.reads(list(reads), tmp_path, status=status, extra={})
    return read, paths, tmp_path


def test_watched_notes_what_store_load_read_and_stops_at_the_end_of_the_block(tmp_path):
    path = tmp_path / "r.npz"
    store.save(path, {"v": np.ones(2)}, {"k": 1})
    load = store.load
    with store.watched() as seen:
        assert store.matches(path, {"k": 1}) and not store.matches(path, {"k": 2})
        assert not store.matches(tmp_path / "missing.npz", {"k": 1})
    assert store.load is load
    assert list(seen) == [path.resolve()] and seen[path.resolve()]["settings"] == {"k": 1}
    other = tmp_path / "s.npz"
    store.save(other, {"v": np.ones(2)}, {"k": 2})
    store.load(other)                                             # after the block: not noted
    assert list(seen) == [path.resolve()]
    with pytest.raises(FileNotFoundError), store.watched():
        store.load(tmp_path / "missing.npz")
    assert store.load is load


def test_each_result_belongs_to_the_item_that_computes_it(stand_in):
    read, paths, _ = stand_in
    assert {item: len(seen) for item, (_, seen) in read.items()} == {"grid": 2, "nads": 1, "study": 3, "unread": 0}
    owner = provenance.owners(read)
    assert owner == {paths["a"].resolve(): "grid", paths["b"].resolve(): "grid", paths["c"].resolve(): "study",
                     paths["n"].resolve(): "nads"}
    # the study reads all the grid reads: it consumes them, whichever comes first
    assert provenance.owners({"study": read["study"], "grid": read["grid"]}) == {
        p: item for p, item in owner.items() if item != "nads"}
    # neither reads all the other reads: the first computes the results they share (fig1, then Chapter 6's)
    a, b = paths["a"], paths["b"]
    assert provenance.owners({"one": ("", {a: {}}), "two": ("", {a: {}, b: {}}), "three": ("", {b: {}})}) == {
        a: "one", b: "three"}
    assert provenance.owners({"x": ("", {a: {}, b: {}}), "y": ("", {b: {}, paths["c"]: {}})})[b] == "x"
    assert provenance.owners({"same": ("", {a: {}}), "again": ("", {a: {}})}) == {a: "same"}


def test_page_rows_group_a_pages_results_by_item_network_and_kind(stand_in):
    read, _, folder = stand_in
    pages = {"chapter": ("study", "nads"), "other": ("unread",)}
    rows = provenance.page_rows("chapter", read, folder, pages=pages)
    # the study's page shows the grid's cells under their own item, its third cell under its own
    assert [(r.item, r.network, r.kind, r.count) for r in rows] == [
        ("grid", "lenet", "D(v)", 2), ("study", "lenet", "D(v)", 1), ("nads", "mlp", "NADs", 1)]
    grid, study, nads = rows
    assert grid.fields == {"epochs": (20,), "n": (1000,), "sigma": (3.0,)} and grid.seeds == 1
    assert grid.seconds == 30.0 and study.seconds == 30.0 and study.fields["sigma"] == (1.5,)
    assert grid.machines == (store.machine(),) and grid.threads == (store.make_record({})["threads"],)
    assert grid.first == grid.last == store.make_record({})["created"][:10]
    assert nads.threads == () and nads.fields == {"method": ("autograd",), "networks": (100,)}
    assert provenance.page_rows("other", read, folder, pages=pages) == []
    # the compute behind a page, each result once (the grid's cells are read by the study too)
    assert provenance.page_seconds("chapter", read, pages=pages) == {"CPU": 60.0, "GPU": 40.0}
    both = {"both": ("grid", "study")}
    assert provenance.page_seconds("both", read, pages=both) == {"CPU": 60.0, "GPU": 0.0}
    assert provenance.pending("other", read, pages=pages) == [
        ("unread", "unread: 0 of 4; `python -m nadcore.bundle unread` computes the rest")]
    assert provenance.pending("chapter", read, pages=pages) == []
    with pytest.raises(ValueError, match="page must be one of chapter, other; got 'ch9'"):
        provenance.page_rows("ch9", read, folder, pages=pages)


def test_the_table_names_the_usual_machine_once_and_the_others_per_row(stand_in):
    read, _, folder = stand_in
    rows = provenance.page_rows("chapter", read, folder, pages={"chapter": ("study", "nads")})
    here = f"{store.machine()}, {tables.threads_text([store.make_record({})['threads']])}"
    one = tables.records_table(rows[:2])
    assert list(one.data.columns) == ["result and settings", "stored", "computed", "compute time"]
    assert list(one.data.index) == ["grid", "study"]
    assert one.data.loc["grid", "result and settings"] == "LeNet, trainings on D(v): n = 1,000, σ = 3, 20 epochs"
    assert one.caption == f"3 stored results, 60 s of compute in all, on {here}."
    both = tables.records_table(rows)   # the estimate on a GPU: no threads, its machine in a column of its own
    assert list(both.data["elsewhere"]) == ["", "", "unknown"]   # no GPU here to name it, no MACHINE.json
    assert both.caption == (f"4 stored results, 2 min of compute in all, on {here} but where the last column "
                            "says otherwise.")
    assert both.data.loc["nads", "result and settings"] == "MLP, NADs: exact gradient, N = 100"
    html = tables.records_table(rows[:1] * 2).to_html()   # an item on several rows renders, dates unbroken
    assert html.count("><code>grid</code></th>") == 2 and "white-space: nowrap" in html   # item names as code
    assert tables.records_table([]) is None


def test_thread_counts_read_in_the_singular_for_one_thread():
    assert [tables.threads_text(t) for t in ((1,), (2,), (1, 2), [16])] == [
        "1 thread", "2 threads", "1, 2 threads", "16 threads"]
    rows = [provenance.Row("grid", "lenet", "D(v)", 3, machines=("AMD EPYC (avx2)",), threads=(1,), seconds=9.0),
            provenance.Row("nads", "mlp", "NADs", 1, machines=("AMD EPYC (avx2)", "Intel Xeon (avx512f)"),
                           threads=(1, 2), seconds=3.0)]
    table = tables.records_table(rows)
    assert table.caption == "4 stored results, 12 s of compute in all, on AMD EPYC (avx2), 1 thread but where the " \
                            "last column says otherwise."
    assert table.data.loc["nads", "elsewhere"] == "AMD EPYC (avx2); Intel Xeon (avx512f), 1, 2 threads"
    assert "1 threads" not in table.to_html()


def test_describe_reads_every_kind_of_stored_result():
    assert provenance.describe(_cell("lenet", 1, 3.0, pooling="blur3")) == (
        "lenet/blur3", "D(v)", {"n": 1000, "sigma": 3.0, "epochs": 20})
    assert provenance.describe(_cell("lenet", 1, 3.0, pooling=False))[0] == "lenet/none"
    fig6 = {"cell": {"index": 16}, "settings": {"arch": "vit", "epochs": 10, "n_train": 2000, "sigma": 1.0}}
    assert provenance.describe(fig6) == ("vit", "D(u_i)", {"n": 2000, "sigma": 1.0, "epochs": 10})
    recipe = {"epochs": 50, "max_lr": 0.2}
    pair = {"cell": {"i": 0, "j": 100, "seed": 3}, "settings": {"arch": "mlp", "n_train": 10, "sigma": 1.0,
                                                               "recipe": recipe}}
    assert provenance.describe(pair) == ("mlp", "pair", {"n": 10, "sigma": 1.0, "epochs": 50})
    ood = {"cell": {"k": 5, "seed": 3}, "settings": {"arch": "lenet", "dataset": "fashion", "sigma": 1.0,
                                                     "recipe": recipe}}
    assert provenance.describe(ood) == ("lenet", "stand-in", {"sigma": 1.0, "epochs": 50, "dataset": "fashion"})
    assert provenance.describe({"arch": "lenet", "kind": "flipped", "recipe": recipe})[1] == "flip"
    assert provenance.describe({"arch": "lenet", "index": 3, "eps": 0.05, "recipe": recipe}) == (
        "lenet", "carrier", {"epochs": 50, "eps": 0.05})
    secant = {"arch": "vgg11", "method": "secant", "num_networks": 10000, "precision": "bfloat16", "compiled": True}
    assert provenance.describe(secant) == ("vgg11", "NADs", {"method": "secant", "networks": 10000,
                                                             "precision": "bfloat16", "compiled": True})
    conv = {"arch": "lenet", "method": "autograd", "sizes": [625, 1250], "ks": [1, 4]}
    assert provenance.describe(conv) == ("lenet", "convergence", {"method": "autograd", "sizes": (625, 1250)})
    assert provenance.describe({**conv, "num_networks": 1000}) == provenance.describe(conv)   # its N are the sizes
    assert provenance.describe({"S": 4, "sim_ls": [1, 2], "sigma": 1.0})[1] == "Theorem 1"
    assert provenance.describe({"anything": 1}) == ("", "other", {})


def test_every_bundle_item_is_on_a_page():
    listed = {item for items in provenance.PAGES.values() for item in items}
    assert listed == set(bundle.ITEMS)
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    assert {f"book/{p}" for p in provenance.PAGES} <= {c["file"] for c in toc["chapters"]}
    assert {p.stem for p in chapters.PAGES} == set(provenance.PAGES)


def test_the_bundles_records_of_a_page(tmp_path):
    """On the real bundle: Chapter 2's three results and the MLP's estimate, as their records say."""
    read = provenance.reads(["pooling", "nads_mlp"])
    rows = provenance.page_rows("x", read, pages={"x": ("pooling", "nads_mlp")})
    kinds = {(r.item, r.kind): r for r in rows}
    assert set(kinds) == {("pooling", "linear model"), ("pooling", "Theorem 1"), ("pooling", "Lemma 1"),
                          ("nads_mlp", "NADs")}
    mlp = kinds[("nads_mlp", "NADs")]
    item = bundle.nad_item("mlp")
    assert mlp.fields == {"method": (item["method"],), "networks": (item["num_networks"],)}
    [record] = read["nads_mlp"][1].values()
    assert mlp.seconds == record["duration_s"] and mlp.machines == (bundle.machine_of(record),)
    assert provenance.pending("x", read, pages={"x": ("pooling", "nads_mlp")}) == []


def test_the_smoke_scale_computes_less_than_the_published_one():
    scales = provenance.scales("06_antialias")
    assert scales["smoke"][0] < scales["paper"][0] and 0 < scales["smoke"][1] < scales["paper"][1] / 10


def test_scales_table_prices_each_chapter_at_both_scales():
    table = tables.scales_table(provenance.chapter_costs(among=["06_antialias"]))
    assert list(table.columns) == ["smoke run", "published scale, all of it"]
    scales = provenance.scales("06_antialias")
    assert list(table.loc["Chapter 6"]) == [tables.hours(scales["smoke"][1]), tables.hours(scales["paper"][1])]
    assert tables.hours(7_614_000) == "2,115 h" and tables.hours(90) == "2 min" and tables.hours(None) == "–"


def test_pending_text_folds_the_commands_into_one():
    todo = [("fig6_x", "fig6_x (lenet): 12 of 33 NAD indices stored; `python -m nadcore.bundle fig6_x` computes "
                       "the rest (~3 min on a 2-core CPU)"),
            ("tp", "tp: not complete; `python -m nadcore.bundle tp` computes the rest")]
    assert tables.pending_text(todo) == (
        "Not complete yet: fig6_x (lenet): 12 of 33 NAD indices stored (~3 min on a 2-core CPU); tp: not complete. "
        "`python -m nadcore.bundle ITEM` computes the rest of each.")
    assert tables.pending_text([]) == ""
    assert tables.settings_text({"method": ("secant",), "sizes": ((125, 250, 625),)}) == "secant, N = 125 to 625"


def test_compute_figure_draws_a_bar_per_page_and_kind_of_device(stand_in):
    read, _, _ = stand_in
    pages = {"01_fourier": ("study",), "07_zoo": ("nads", "unread")}
    fig = tables.compute_figure(provenance.seconds_by_page(read, pages))
    bars = {(round(b.get_y() + b.get_height() / 2, 1), round(b.get_width() * 3600, 6)) for b in fig.axes[0].patches}
    assert bars == {(-0.2, 60.0), (1.2, 40.0)}    # Chapter 1 on a CPU, Chapter 7 on a GPU, nothing else
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["Chapter 1", "Chapter 7"]
    style.check_readable(fig)
