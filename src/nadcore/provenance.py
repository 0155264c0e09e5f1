"""Where every number comes from (the book's appendix B): the stored records behind each page.

Every result a page shows at the published scale is read from the results bundle, whose items
(`bundle.ITEMS`) each declare the pages that show them (`BundleItem.pages`); `PAGES` lists them by
page. `reads` runs `bundle.status` of each item (what `python -m nadcore.bundle status` prints),
plus the few readers of a page that status does not call (`EXTRA`, the items' `also_reads`), and notes
every stored result they open through `store.load` (`store.watched`), with its record. A result belongs to the item that
computes it (`owners`); other items read it as an input (Chapter 6 reads Chapter 1's max-pooling
cells, Fig. 6 reads its NADs). `page_rows` groups the results a page's items read by their item and by what they hold
(`describe`: the network, the kind of result and the settings that vary), with the machine,
threads, dates and compute time of their records; `page_seconds` sums their compute time on CPUs
and GPUs; `pending` lists the page's items not complete yet, in status's words. `scales`
compares what a chapter computes at the smoke and the published scale, in the plan's unit costs
(`plan.chapter_plan`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from nadcore import bundle, chapters, plan, store
from nadcore.checks import InputError

if TYPE_CHECKING:
    from pathlib import Path

    import torch


PAGES = {p.stem: tuple(name for name, item in bundle.REGISTRY.items() if p.stem in item.pages)
         for p in chapters.PAGES}   # the bundle items each page shows, as the bundle declares them
# readers a page calls besides the items' status, as the items declare them (`BundleItem.also_reads`)
EXTRA = {name: item.also_reads for name, item in bundle.REGISTRY.items() if item.also_reads is not None}
INCOMPLETE = "computes the rest"   # how `bundle.status` says that an item is not complete
OTHER_KINDS = {"train_ls": "linear model", "sim_ls": "Theorem 1", "hess_n": "Lemma 1",
               "overlap_arch": "precision"}   # a setting that names each of the other kinds of results


def reads(items: Iterable[str] = bundle.ITEMS, bundle_dir: str | Path = bundle.BUNDLE,
          status: Callable[[str], str] | None = None,
          extra: Mapping[str, Callable[[str | Path], object]] | None = None) -> dict[str, tuple[str, dict[Path, dict]]]:
    """`{item: (status line, {path: record})}`: for each of `items`, its `status` (default
    `bundle.status(item, bundle_dir)`) and every stored result it and its `extra` reader (default `EXTRA`)
    read."""
    status = status or (lambda item: bundle.status(item, bundle_dir))
    extra = EXTRA if extra is None else extra
    out = {}
    for item in items:
        with store.watched() as seen:
            line = status(item)
            if item in extra:
                extra[item](bundle_dir)
        out[item] = (line, dict(seen))
    return out


def owners(read: Mapping[str, tuple[str, Mapping[Path, dict]]]) -> dict[Path, str]:
    """`{path: item}`: each stored result of `read` (`reads`, in `bundle.ITEMS` order) and the item that
    computes it: among the items that read it, one that reads no other such item's results as inputs
    (an item whose reads strictly include another's consumes them), the first of those in `read`'s order,
    as the bundle computes them (`python -m nadcore.bundle all`)."""
    seen = {item: set(paths) for item, (_, paths) in read.items()}
    readers = {}
    for item, paths in seen.items():
        for path in paths:
            readers.setdefault(path, []).append(item)
    consumes = {}

    def consumer(a, b):   # a reads all that b reads, and more
        if (a, b) not in consumes:
            consumes[(a, b)] = seen[b] < seen[a]
        return consumes[(a, b)]

    return {path: next(a for a in items if not any(consumer(a, b) for b in items if b != a))
            for path, items in readers.items()}


def _value(x):
    return tuple(x) if isinstance(x, list) else x


class Described(NamedTuple):
    """What a stored result holds (`describe`)."""
    network: str
    kind: str
    fields: dict[str, Any]


def describe(settings: Mapping[str, Any]) -> Described:
    """What a stored result holds, from its record's settings: `Described(network, kind, fields)`, with `kind` one
    of "D(v)" (a training on a Fourier direction), "D(u_i)" (on a NAD), "pair" (on D(v_i) + D(v_j)),
    "stand-in" (a dataset with a carrier D(v_k)), "flip", "carrier", "NADs", "convergence", one of
    `OTHER_KINDS` or "other"; `network` names the architecture and, where one is set, its pooling
    (`arch/pooling`, "none" for no pooling); `fields` `{name: value}` the settings a reader compares:
    method, networks, precision, compiled, n, sigma, epochs, dataset, eps, sizes."""
    s = dict(settings)
    cell = s.pop("cell", None) if isinstance(s.get("cell"), dict) else None
    inner = s.pop("settings", {}) if cell is not None else {}
    flat = {**s, **inner, **(cell or {})}
    recipe = flat.get("recipe") or {}
    if cell is not None and {"kx", "ky"} <= set(cell):
        kind = "D(v)"
    elif cell is not None and "index" in cell:
        kind = "D(u_i)"
    elif cell is not None and {"i", "j"} <= set(cell):
        kind = "pair"
    elif cell is not None and "k" in cell:
        kind = "stand-in"
    elif "kind" in flat and "recipe" in flat:
        kind = "flip"
    elif "index" in flat and "recipe" in flat:
        kind = "carrier"
    elif "sizes" in flat:
        kind = "convergence"
    elif "num_networks" in flat:
        kind = "NADs"
    else:
        kind = next((k for key, k in OTHER_KINDS.items() if key in flat), "other")
    arch = flat.get("arch") or ("+".join(flat["archs"]) if isinstance(flat.get("archs"), list) else "")
    pooling = flat.get("pooling")
    network = arch + ("/none" if pooling is False else f"/{pooling}" if isinstance(pooling, str) else "")
    epochs = recipe.get("epochs", flat.get("epochs"))
    if isinstance(epochs, dict):   # a sweep's epochs by architecture
        epochs = epochs.get(arch)
    fields = {"method": flat.get("method"), "networks": flat.get("num_networks") if kind == "NADs" else None,
              "precision": flat.get("precision") if kind in ("NADs", "convergence", "D(v)") else None,
              "compiled": flat.get("compiled") or None, "n": flat.get("n", flat.get("n_train")),
              "sigma": flat.get("sigma"), "epochs": epochs, "dataset": flat.get("dataset"),
              "eps": flat.get("eps") if kind == "carrier" else None,
              "sizes": _value(flat.get("sizes"))}
    return Described(network, kind, {k: v for k, v in fields.items() if v is not None})


@dataclass
class Row:
    """The stored results of one item that hold one kind of result of one network: how many (`count`),
    the values each setting takes (`fields`, `{name: sorted values}`), how many seeds, where they were
    computed (`machines`, `threads`: None on a GPU), when (`first`, `last`: dates) and the sum of their
    compute times (`seconds`, None when no record has one)."""
    item: str
    network: str
    kind: str
    count: int = 0
    fields: dict = field(default_factory=dict)
    seeds: int = 0
    machines: tuple = ()
    threads: tuple = ()
    first: str = ""
    last: str = ""
    seconds: float | None = None


def _sorted(values):
    return tuple(sorted(values, key=lambda v: (str(type(v)), v if not isinstance(v, tuple) else str(v))))


def page_rows(page: str, read: Mapping[str, tuple[str, Mapping[Path, dict]]], bundle_dir: str | Path = bundle.BUNDLE,
              pages: Mapping[str, Sequence[str]] | None = None) -> list[Row]:
    """The `Row`s of `page` (a key of `pages`, default `PAGES`): every stored result its items read in `read`
    (`reads` of all the bundle's items, in their order, so that `owners` sees every reader), grouped by the
    item that owns it, its network and kind (`describe`), in the order the page's items list them."""
    pages = _check_page(page, pages)
    owner = owners(read)
    groups = {}
    for item in pages[page]:
        for path, record in read.get(item, ("", {}))[1].items():
            network, kind, fields = describe(record["settings"])
            groups.setdefault((owner[path], network, kind), {})[path] = (record, fields)
    out = []
    for (item, network, kind), members in groups.items():
        records = [r for r, _ in members.values()]
        names = {name for _, f in members.values() for name in f}
        gpu = [str(r.get("device", "")).startswith("cuda") for r in records]
        durations = [r["duration_s"] for r in records if r.get("duration_s") is not None]
        dates = sorted((r.get("created") or "")[:10] for r in records if r.get("created"))
        out.append(Row(item, network, kind, len(records),
                       {n: _sorted({f[n] for _, f in members.values() if n in f}) for n in sorted(names)},
                       len({r.get("seed") for r in records}),
                       _sorted({bundle.machine_of(r, bundle_dir) or "unknown" for r in records}),
                       _sorted({None if g else r.get("threads") for r, g in zip(records, gpu)} - {None})
                       if not all(gpu) else (),
                       dates[0] if dates else "", dates[-1] if dates else "",
                       sum(durations) if durations else None))
    return out


def page_seconds(page: str, read: Mapping[str, tuple[str, Mapping[Path, dict]]],
                 pages: Mapping[str, Sequence[str]] | None = None) -> dict[str, float]:
    """`{"CPU": seconds, "GPU": seconds}`: the compute time of the stored results `page`'s items read
    (`reads`), each result once, by the kind of device its record names."""
    pages = _check_page(page, pages)
    records = {path: r for item in pages[page] for path, r in read.get(item, ("", {}))[1].items()}
    out = {"CPU": 0.0, "GPU": 0.0}
    for r in records.values():
        out["GPU" if str(r.get("device", "")).startswith("cuda") else "CPU"] += r.get("duration_s") or 0.0
    return out


def seconds_by_page(read: Mapping[str, tuple[str, Mapping[Path, dict]]],
                    pages: Mapping[str, Sequence[str]] | None = None) -> dict[str, dict[str, float]]:
    """`{page title: page_seconds}` of each of `pages` (default `PAGES`), in their order (what
    `plots.provenance.compute_figure` draws)."""
    pages = PAGES if pages is None else pages
    return {chapters.page(p).title: page_seconds(p, read, pages) for p in pages}


def pending(page: str, read: Mapping[str, tuple[str, Mapping[Path, dict]]],
            pages: Mapping[str, Sequence[str]] | None = None) -> list[tuple[str, str]]:
    """`[(item, status line)]` of the items of `page` that `bundle.status` says are not complete."""
    pages = _check_page(page, pages)
    return [(item, read[item][0]) for item in pages[page] if item in read and INCOMPLETE in read[item][0]]


def _check_page(page, pages):
    pages = PAGES if pages is None else pages
    if page not in pages:
        raise InputError(f"page must be one of {', '.join(pages)}; got {page!r}")
    return pages


def scales(chapter: str, device: str | torch.device = "cpu") -> dict[str, tuple[int, float | None]]:
    """What `chapter` computes from nothing stored, at the smoke and at the published ("paper") scale:
    `{scale: (units, seconds)}`, the plan's units (cells, networks, runs) and its rough cost on `device`
    (`plan.chapter_plan`; None where the plan knows no cost of an item)."""
    out = {}
    with tempfile.TemporaryDirectory() as empty:
        for scale in ("smoke", "paper"):
            items = plan.chapter_plan(chapter, scale, results_dir=empty, device=device).items
            costs = [it.cost_s for it in items]
            out[scale] = (sum(it.count for it in items), None if None in costs else float(sum(costs)))
    return out


def chapter_costs(read: Mapping[str, tuple[str, Mapping[Path, dict]]] | None = None,
                  among: Iterable[str] | None = None,
                  device: str | torch.device = "cpu") -> dict[str, tuple[float | None, ...]]:
    """`{page title: (smoke seconds, published-scale seconds[, stored seconds])}` of each chapter of `among`
    (default: every chapter `nadcore plan` prices, `chapters.CHAPTERS`): the rough cost of its smoke run and
    of its published scale from nothing stored (`scales`, on `device`) and, with `read` (`reads`), the
    compute time its stored results took, as their records say (what `plots.provenance.scales_table` shows)."""
    out = {}
    for chapter in among or chapters.CHAPTERS:
        s = scales(chapter, device)
        stored = () if read is None else (float(sum(r.seconds or 0 for r in page_rows(chapter, read))),)
        out[chapters.page(chapter).title] = (s["smoke"][1], s["paper"][1], *stored)
    return out
