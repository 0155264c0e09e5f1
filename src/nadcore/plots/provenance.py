"""The tables of appendix B, "Where every number comes from": one per page, from `experiments.provenance`.

`records_table` writes a page's `Row`s one per line: the bundle item, what it holds (network and kind),
the settings a reader compares, how many results, when and in how much compute time they were made;
where every row was computed on one machine with one thread count, the caption says so once, else a
column does. `scales_table` puts each chapter's smoke run beside its published scale.
"""

from nadcore import plan
from nadcore.experiments import provenance
from nadcore.plots import antialias, page, style

KINDS = {"D(v)": "trainings on D(v)", "D(u_i)": "trainings on D(uᵢ)", "pair": "trainings on D(vᵢ) + D(vⱼ)",
         "stand-in": "stand-in + D(vₖ)", "flip": "trainings on flipped images", "carrier": "trainings with a carrier",
         "NADs": "NADs", "convergence": "N vs 2N", "linear model": "Fig. 4b: the linear model of pooling trained",
         "Theorem 1": "Theorem 1 by Monte Carlo", "Lemma 1": "Lemma 1's Hessians",
         "precision": "bfloat16 and torch.compile against float32"}
METHODS = {"secant": "secant", "autograd": "exact gradient", "hessian": "Hessian"}
PAGE_TITLES = {"01_fourier": "Chapter 1", "02_pooling": "Chapter 2", "03_nads": "Chapter 3",
               "04_cifar10": "Chapter 4", "05_underspecification": "Chapter 5", "06_antialias": "Chapter 6",
               "07_zoo": "Chapter 7", "nads_in_practice": "Appendix A"}


def network(name):
    """`arch/pooling` of `provenance.describe` as a reader names it: "LeNet (avg pool)"."""
    arch, _, pooling = name.partition("/")
    archs = [style.LABELS.get(a, a) for a in arch.split("+")] if arch else []
    label = " and ".join(archs) if len(archs) <= 2 else f"{len(archs)} networks"
    return label + (f" ({antialias.SHORT.get(pooling, pooling)})" if pooling else "")


def _number(v):
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _values(values, fmt=_number):
    return ", ".join(fmt(v) for v in values)


def settings_text(fields):
    """The settings of a `Row` in words: "exact gradient, N = 10,000, bfloat16; n = 10,000, σ = 3, 20 epochs"."""
    parts = []
    if "method" in fields:
        parts.append(_values(fields["method"], lambda m: METHODS.get(m, m)))
    if "networks" in fields:
        parts.append(f"N = {_values(fields['networks'])}")
    if "sizes" in fields:
        parts.append("N = " + "; ".join(" ".join(_number(n) for n in s) for s in fields["sizes"]))
    for name in ("precision", "dataset"):
        if name in fields:
            parts.append(_values(fields[name]))
    if "compiled" in fields:
        parts.append("torch.compile")
    for name, head in (("n", "n = "), ("sigma", "σ = "), ("eps", "ε = ")):
        if name in fields:
            parts.append(head + _values(fields[name]))
    if "epochs" in fields:
        parts.append(f"{_values(fields['epochs'])} epochs")
    return ", ".join(parts)


def _dates(row):
    if not row.first:
        return "–"
    return row.first if row.first == row.last else f"{row.first} to {row.last[5:]}"


def _where(row):
    return "; ".join(row.machines) + (f", {_values(row.threads)} threads" if row.threads else "")


def records_table(rows):
    """The rows of `provenance.page_rows` as a table (a pandas Styler; `.data` is the table), the machine
    and threads in the caption when all rows share them; None without rows."""
    if not rows:
        return None
    where = {_where(r) for r in rows}
    body = [[r.item, f"{network(r.network)}: {KINDS.get(r.kind, r.kind)}".lstrip(": "),
             settings_text(r.fields), f"{r.count:,}" + (f" ({r.seeds} seeds)" if r.seeds > 1 else ""), _dates(r),
             "–" if r.seconds is None else plan.duration(r.seconds)] + ([] if len(where) == 1 else [_where(r)])
            for r in rows]
    columns = ["item", "result", "settings", "stored", "computed", "compute time"]
    df = page.table(body, columns + ([] if len(where) == 1 else ["machine"])).set_index("item").rename_axis(None)
    total = sum(r.seconds or 0 for r in rows)
    caption = (f"{sum(r.count for r in rows):,} stored results, {plan.duration(total)} of compute in all"
               + (f"; computed on {where.pop()}." if len(where) == 1 else "."))
    return df.style.set_caption(caption).set_table_styles([
        {"selector": "th, td",
         "props": "font-size: 0.8em; padding: 0.15em 0.4em; text-align: left; vertical-align: top"},
        {"selector": "caption", "props": "caption-side: bottom; font-size: 0.85em; text-align: left"}])


def scales_table(chapters=None, device="cpu"):
    """One row per chapter: what its smoke run and its published scale compute from nothing stored
    (`provenance.scales`: the plan's units, results to compute, and its rough cost on `device`)."""
    rows = []
    for chapter in chapters or [c for c in provenance.PAGES if c[0].isdigit()]:
        s = provenance.scales(chapter, device)
        cost = lambda sec: "–" if sec is None else plan.duration(sec)
        rows.append([PAGE_TITLES.get(chapter, chapter), f"{s['smoke'][0]:,}", cost(s["smoke"][1]),
                     f"{s['paper'][0]:,}", cost(s["paper"][1])])
    return page.table(rows, ["page", "smoke: results", "smoke: cost", "published: results", "published: cost"],
                      index="page")
