"""The book's pages, each declared once (torch-free): its notebook's stem, the title the book gives it,
the presets whose overrides it takes, and whether `nadcore plan` prices it. `plan` registers each
chapter's planner under its stem (`plan.planner`), `presets.check_overrides` refuses overrides of presets
a chapter does not read, `provenance` names the pages by their titles; none keeps a table of its own."""

from __future__ import annotations

from dataclasses import dataclass

from nadcore.checks import InputError


@dataclass(frozen=True)
class Page:
    """One page of the book: `stem` (its notebook, `book/STEM.ipynb`), `title` ("Chapter 1"), `reads` (the
    presets whose `overrides` it takes; none: it takes none) and `planned` (a chapter `nadcore plan` prices
    and `nadcore run` runs at a scale; the appendices are not)."""
    stem: str
    title: str
    reads: tuple[str, ...] = ()
    planned: bool = True


PAGES = (Page("01_fourier", "Chapter 1", ("fourier",)), Page("02_pooling", "Chapter 2"), Page("03_nads", "Chapter 3"),
         Page("04_cifar10", "Chapter 4"), Page("05_underspecification", "Chapter 5", ("underspecification",)),
         Page("06_antialias", "Chapter 6", ("antialias", "fourier", "nads")), Page("07_zoo", "Chapter 7"),
         Page("08_training", "Chapter 8"), Page("nads_in_practice", "Appendix A", planned=False))
CHAPTERS = tuple(p.stem for p in PAGES if p.planned)   # the chapters `nadcore plan` prices, in the book's order


def page(stem: str) -> Page:
    """The `Page` whose notebook is `book/STEM.ipynb`."""
    for p in PAGES:
        if p.stem == stem:
            return p
    raise InputError(f"page must be one of {', '.join(p.stem for p in PAGES)}; got {stem!r}")


def reads(stem: str) -> tuple[str, ...]:
    """The presets whose overrides the page `stem` takes: none for a page that declares none or a notebook
    the book does not declare."""
    return next((p.reads for p in PAGES if p.stem == stem), ())
