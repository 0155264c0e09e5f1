"""What Chapter 8 (NADs during training, and the kernel's NADs) states: how the NADs move while LeNet trains,
the neural tangent kernel's NADs beside the secant's and the exact gradient's, the linearised LeNet, the two
conventions of D(v), and the answers to the chapter's questions, from the bundle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
from IPython.display import Markdown

from nadcore import bundle, nads, presets, published, verdicts
from nadcore.experiments import ch3_nads
from nadcore.experiments import ch8_training as c8
from nadcore.plots import nads as nad_figs
from nadcore.plots import page
from nadcore.plots import training as figs

if TYPE_CHECKING:
    from matplotlib.figure import Figure

STEM = "08_training"


@dataclass
class Findings:
    """Chapter 8's page: `glued` {name: value} and what its figures draw, the stored training `cells` at the
    published `settings`, Fig. 6 along each estimate of LeNet's NADs `runs` {method: complete seeds' runs}, and
    the linearised LeNet's gaps to the full one `gaps` (`boxes` say what is not stored yet)."""
    cells: dict[Any, Any]
    settings: presets.Training
    runs: dict[str, Any] = field(default_factory=dict)
    gaps: Any = None
    boxes: list[Any] = field(default_factory=list)
    glued: dict[str, Any] = field(default_factory=dict)


def findings(bundle_dir: str = "../bundle") -> Findings:
    """Every number, verdict and table Chapter 8's page states, from the bundle in `bundle_dir`."""
    settings = presets.preset("training", "paper")
    f = Findings(bundle.load_training(bundle_dir), settings)
    g = f.glued
    g.update({f"ch8_{key}": value for key, value in c8.key_numbers(f.cells, settings).items()})
    results = verdicts.load_training(bundle_dir)   # what the results page's rows read: the kernel's NADs, Fig. 6
    kernel, ks = results.kernel, list(verdicts.OVERLAP_KS)
    overlaps = {c8.ESTIMATES[m]: nads.compare(kernel["hessian"], kernel[m], ks) for m in ("secant", "autograd")}
    f.runs = {m: verdicts.fig6_runs(results.fig6_nads, "fig6", m, bundle.FIG6_CAPTION)
              for m in ("secant", "autograd", "hessian")}
    g.update({f"ch8_{key}": value for key, value in c8.kernel_numbers(overlaps, ks, f.runs).items()})
    g["ch8_kernel_networks"] = kernel["hessian"].num_networks
    g.update({f"ch8_{key}": getattr(settings, key) for key in ("n_train", "sigma", "epochs", "grad_samples")})
    g["ch8_leading"] = figs.leading(f.cells, settings)
    plt.close("all")
    g["ch8_thresholds"] = Markdown(c8.thresholds())
    rows = verdicts.training_questions(results)
    g["verdict"] = page.table([(q.question, q.expected, q.measured, q.outcome + (f": {q.reason}" if q.reason else ""))
                               for q in rows], ("Question", "Expected", "Ours", "Verdict"), index="Question")
    f.gaps = c8.linearised_gaps(*verdicts.linearised_runs(results))
    if not f.gaps:
        f.boxes.append(page.not_computed("the linearised LeNet",
                                         "python -m nadcore.bundle " + next(iter(bundle.FIG6_LINEARISED))))
    g["ch8_linearised_reading"] = Markdown(c8.linearised_reading(f.gaps))
    conv = bundle.load_conventions(bundle_dir)
    g["ch8_conventions_reading"] = Markdown(c8.conventions_reading(conv, bundle.conventions_settings()["num_networks"]))
    return f


def fig6(f: Findings) -> Figure:
    """Fig. 6 of LeNet at the caption's sigma along each estimate of its NADs (`f.runs`), beside the published curve."""
    panels = {f"LeNet, σ = {bundle.FIG6_CAPTION:g}": ("lenet", {m: ch3_nads.seed_spread(r)
                                                               for m, r in f.runs.items() if r})}
    return nad_figs.fig6_estimates(panels, {"lenet": published.fig6("lenet")}, width=0.8)


def linearised(f: Findings) -> Figure | None:
    """The linearised LeNet's gaps to the full one (`plots.training.linearised`), or None before they are stored."""
    return figs.linearised(f.gaps) if f.gaps else None


def run_numbers(run: c8.ChapterRun) -> dict[str, Any]:
    """What the page's own run (`ch8_training.chapter_results`) adds to its text: its epochs and training set size."""
    return {"ch8_page_epochs": run.settings.epochs, "ch8_page_n": run.settings.n_train}
