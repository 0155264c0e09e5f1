"""What the provenance appendix states: how many stored records the book reads, the hours and machines behind
them, the CPU's share and the pages that cost most, from the bundle."""

from __future__ import annotations

from typing import Any

from IPython.display import Markdown

from nadcore import bundle, chapters, prose, provenance
from nadcore.plots import provenance as tables

STEM = "provenance"


def findings(bundle_dir: str = "../bundle") -> tuple[dict[str, Any], dict[str, Any]]:
    """`(glued, read)`: the numbers the appendix glues, and every item's status with the records it reads
    (`provenance.reads`), which its tables show page by page."""
    read = provenance.reads(bundle.ITEMS, bundle_dir)
    every = {path: record for _, seen in read.values() for path, record in seen.items()}
    seconds = sum(r.get("duration_s") or 0 for r in every.values())
    gpu = sum(r.get("duration_s") or 0 for r in every.values() if str(r.get("device")).startswith("cuda"))
    machines = sorted({bundle.machine_of(r, bundle_dir) or "unknown" for r in every.values()})
    spent = {page: sum(provenance.page_seconds(page, read).values()) for page in provenance.PAGES}
    top = sorted(spent, key=lambda p: spent[p], reverse=True)[:2]
    glued = {"prov_total": len(every), "prov_hours": seconds / 3600,
             "prov_machines": Markdown(prose.and_list(machines)), "prov_cpu_share": 1 - gpu / seconds,
             "prov_top_pages": " and ".join(chapters.page(p).title for p in top)}
    return glued, read


def records(stem: str, read: dict[str, Any], bundle_dir: str = "../bundle") -> list[Any]:
    """What the appendix shows for page `stem`: the table of the records it reads (`read`, `findings`'), and what
    its items not complete yet still lack."""
    out = [tables.records_table(provenance.page_rows(stem, read, bundle_dir))]
    todo = provenance.pending(stem, read)
    if todo:
        out.append(Markdown(tables.pending_text(todo)))
    return [x for x in out if x is not None]
