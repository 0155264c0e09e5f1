"""What the appendix "NADs in practice" states: the GPU's cost of the secant, the exact gradient's NADs beside
the secant's, the bfloat16 check, and how the estimates converge with N, from the bundle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from IPython.display import Markdown

from nadcore import bundle, nads, plan, store
from nadcore.experiments import ch3_nads
from nadcore.plots import nads as plots
from nadcore.plots import page

STEM = "nads_in_practice"
KS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]   # the overlaps' subspace sizes


@dataclass
class Findings:
    """The appendix's page: `glued` {name: value}, every stored estimate `stored` {(arch, method): NADResult},
    and the "not computed here" boxes `notes` {"nads", "fig6", "precision"} of what the bundle does not hold yet."""
    stored: dict[tuple[str, str], Any]
    notes: dict[str, list[Any]] = field(default_factory=dict)
    glued: dict[str, Any] = field(default_factory=dict)


def findings(bundle_dir: str = "../bundle") -> Findings:
    """Every number and reading the appendix states, from the bundle in `bundle_dir`."""
    f = Findings(bundle.stored_nads(bundle_dir=bundle_dir))
    f.notes = {"nads": _missing_nads(f.stored), "fig6": _missing_fig6(bundle_dir), "precision": []}
    for part in (_gpu(f.stored), _secant_exact(f.stored, bundle_dir), _precision(bundle_dir, f.notes["precision"]),
                 _convergence(f.stored, bundle_dir)):
        f.glued.update(part)
    return f


def _missing_nads(stored):
    """A box for the deep networks' estimates not stored, with their command and cost."""
    missing = [(a, m) for m in ("autograd", "secant") for a in bundle.GPU_NAD_ARCHS if (a, m) not in stored]
    if not missing:
        return []
    items = [bundle.nad_item(a, m) for a, m in missing]
    cost = sum(plan.nad_seconds(a, m, s.get("precision", "float32"), s.get("compiled", False)) * s["num_networks"]
               for (a, m), s in zip(missing, items))
    names = ", ".join(f"{plots.style.LABELS[a]} ({plots.METHODS[m]}, {s['num_networks']:,} networks)"
                      for (a, m), s in zip(missing, items))
    command = "python -m nadcore.bundle " + " ".join(f"nads_{a}" + ("_autograd" if m == "autograd" else "")
                                                     for a, m in missing)
    return [page.not_computed(f"Our NADs of {names}", command, plan.duration(cost))]


def _missing_fig6(bundle_dir):
    """A box for each deep network's Fig. 6 not stored whole, its cost from the VGG-11 cells this CPU trained."""
    f6, boxes = bundle.fig6_comparison(bundle_dir), []
    for name, (a, indices) in bundle.DEEP_FIG6.items():
        done = len(f6.deep[a])
        if done < len(indices):
            minutes = [r["duration_s"] / 60 for r in bundle.load_train_precision(bundle_dir)[1]]
            boxes.append(page.not_computed(
                f"Fig. 6 of {plots.style.LABELS[a]} at NADs {', '.join(map(str, indices))} "
                f"({done} of {len(indices)} stored)", f"python -m nadcore.bundle {name}",
                f"{(len(indices) - done) * np.mean(minutes) / 60:.0f} hours"))
    return boxes


def _gpu(stored):
    """The GPU the secant ran on and its seconds a network, from the estimates' records."""
    gpus = [r.record["machine"].split(" (")[0] for r in stored.values() if r.record.get("device") == "cuda"]
    out: dict[str, Any] = {"secant_gpu": gpus[0] if gpus else "NVIDIA GPU"}
    for a in bundle.SECANT_CUDA:
        r = stored.get((a, "secant"))
        each = r.record["duration_s"] / r.num_networks if r else float("nan")
        out[f"gpu_s_{a}"], out[f"gpu_h_{a}"] = each, each * 10000 / 3600
    return out


def _secant_exact(stored, bundle_dir):
    """The exact gradient's NADs beside the secant's: low-frequency shares, LeNet's overlaps, the deep networks'."""
    out: dict[str, Any] = {f"low_{a}_{m}_1": float(ch3_nads.low_frequency_share(stored[(a, m)])[0])
                           for a in ("lenet", "vgg11") for m in ("secant", "autograd")}
    pair = nads.subspace_overlaps(stored[("lenet", "secant")].nads, stored[("lenet", "autograd")].nads, KS)
    out.update({f"secant_exact_{k}": float(v) for k, v in zip(KS, pair)})
    deep = bundle.secant_exact_overlaps(KS, bundle_dir=bundle_dir)
    reading = ("For the deeper networks the two estimators share: " + "; ".join(
        f"{plots.style.LABELS[a]} ({stored[(a, 'secant')].num_networks:,} secant networks) "
        f"{v[KS.index(1)]:.2f} at $k = 1$, {v[KS.index(16)]:.2f} at $k = 16$ and {v[KS.index(64)]:.2f} at $k = 64$"
        for a, v in deep.items()) + ".") if deep else ""   # else the not-computed note says it
    out["deep_secant_exact_reading"] = Markdown(reading)
    return out


def _precision(bundle_dir, boxes):
    """The bfloat16 check in words; while it is not stored, empty, and its box appended to `boxes`."""
    check = bundle.load_precision(bundle_dir)
    if check is None:
        boxes.append(page.not_computed("The bfloat16 check", "python -m nadcore.bundle precision", "20 min"))
        return {"precision_reading": Markdown("")}
    q = bundle.PRECISION
    lowest = "; ".join(f"{plots.style.LABELS[a]} {check[a]['eager'].min():.4f} / {check[a]['compiled'].min():.4f}"
                       for a in q.archs)
    ov, pk = check["overlaps"], q.ks
    reading = (
        f"The lowest cosine of each architecture's {q.count} networks with float32, eager / "
        f"compiled: {lowest}. The 1,000 LeNets' bfloat16 NADs span the float32 ones' leading subspaces: an "
        f"overlap of {min(ov['compiled']):.4f} or more for every $k$ from {pk[0]} to {pk[-1]}, where two "
        f"float32 halves share {ov['floor'][pk.index(16)]:.2f} at $k = 16$: " + (
            "bfloat16 moves the NADs far less than drawing other networks does."
            if min(ov["compiled"]) > max(ov["floor"]) else
            "at some $k$ bfloat16 moves the NADs as much as drawing other networks does."))
    return {"precision_reading": Markdown(reading)}


def _convergence(stored, bundle_dir):
    """How the estimates converge with N: the paper's N, the exact gradient's, the deep networks' secant."""
    paper = store.load(bundle.convergence_path(bundle_dir), bundle.convergence_item()).arrays
    last = dict(zip(paper["ks"].tolist(), paper["overlap"][-1]))
    out: dict[str, Any] = {f"conv_{k}": float(last[k]) for k in (1, 16, 256)}
    out.update({"conv_n": int(paper["sizes"][-1]), "conv_2n": 2 * int(paper["sizes"][-1]),
                "aconv_n": int(bundle.AUTOGRAD_CONV_SIZES[-1]), "aconv_2n": 2 * int(bundle.AUTOGRAD_CONV_SIZES[-1])})
    convs = {a: bundle.load_convergence(a, bundle_dir) for a in bundle.AUTOGRAD_CONV_ARCHS}
    for a, c in convs.items():
        if c is not None:
            out.update({f"aconv_{a}_{k}": float(v) for k, v in zip(c["ks"].tolist(), c["overlap"][-1])})
            lam = stored[(a, "autograd")].eigenvalues
            out[f"aconv_{a}_ratio16"] = float(lam[16] / lam[0])
    secant = {a: c for a in bundle.SECANT_CONV_ARCHS
              if (c := bundle.load_convergence(a, bundle_dir, "secant")) is not None}
    out["secant_conv_reading"] = Markdown(_secant_reading(secant, convs, stored) if secant else "")
    return out


def _secant_reading(secant, convs, stored):
    """The deep networks' secant convergence in words, and why a first NAD that does not settle does not."""
    said = []
    for a, c in secant.items():
        n, o = int(c["sizes"][-1]), dict(zip(c["ks"].tolist(), c["overlap"][-1]))
        exact = dict(zip(convs[a]["sizes"].tolist(), convs[a]["overlap"][:, list(convs[a]["ks"]).index(16)]))
        said.append(f"{plots.style.LABELS[a]} at $N$ = {n:,} against {2 * n:,}: {o[1]:.2f} at $k = 1$ and "
                    f"{o[16]:.2f} at $k = 16$"
                    + (f" (exact gradient: {exact[n]:.2f} at $k = 16$)" if n in exact else ""))
    reading = "The secant estimates of the deeper networks, at the $N$ their networks allow: " + "; ".join(said) + "."
    for a, c in secant.items():   # a first NAD that does not settle: its eigenvalue has a close neighbour
        lam, o = stored[(a, "secant")].eigenvalues, dict(zip(c["ks"].tolist(), c["overlap"][-1]))
        if o[1] < 0.5:
            reading += (f" {plots.style.LABELS[a]}'s first NAD does not settle: its second eigenvalue is "
                        f"{lam[1] / lam[0]:.3f} of the first, so the two directions trade places from one "
                        f"draw of networks to the next, while the leading subspace ({o[4]:.2f} at $k = 4$) holds.")
    return reading
