"""What Chapter 2 (pooling and the signal-to-noise ratio gamma(l)) states: Theorem 1 and Lemma 1 against their
simulations, Fig. 4a in closed form (the printed constant in both conventions), Fig. 4b's plateau exits against
zeta(l), and the verdicts, from the bundle."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from IPython.display import Markdown

from nadcore import bundle, plan, pooling, presets, prose, verdicts
from nadcore.experiments import ch2_pooling
from nadcore.pages import paper_cost_s
from nadcore.presets import preset

STEM = "02_pooling"


@dataclass
class Findings:
    """Chapter 2's page: `glued` {name: value} and what its figures draw, the stored results `paper`
    (`bundle.load_pooling`) at the published settings `big`, their zeta(l) `zeta`, and Fig. 4a in closed form
    at gamma(l) of the average pooling's prefilter `m_hat`: Bayes accuracy for our data (`exact`, classes eps
    apart) and as printed (`printed`)."""
    paper: ch2_pooling.PoolingResults
    big: presets.Pooling
    zeta: Any
    m_hat: Any
    exact: np.ndarray
    printed: np.ndarray
    rows: dict[str, verdicts.Row] = field(default_factory=dict)
    glued: dict[str, Any] = field(default_factory=dict)


def findings(bundle_dir: str = "../bundle") -> Findings:
    """Every number, verdict and table Chapter 2's page states, from the bundle in `bundle_dir`."""
    big = preset("pooling", "paper")  # the published settings, stored
    paper = bundle.load_pooling(bundle_dir)
    if paper is None:
        raise FileNotFoundError("no stored results: python -m nadcore.bundle pooling computes them")
    D, S, eps, sigma = big.D, big.S, big.eps, big.sigma
    m_hat = pooling.prefilter("average", D, S)
    f = Findings(paper, big, ch2_pooling.fig4b_zeta(big), m_hat,
                 pooling.bayes_accuracy(m_hat, S, eps, sigma).numpy(),
                 pooling.bayes_accuracy(m_hat, S, eps, sigma, convention="paper").numpy())
    f.rows = {"theorem1": verdicts.theorem1(paper.theorem1, big), "fig4a": verdicts.fig4a(big),
              "lemma1": verdicts.lemma1(paper.lemma1, big), "fig4b": verdicts.fig4b(paper.fig4b, f.zeta, big)}
    for part in (_verdicts(f), _settings(big), _fig4a(f)):
        f.glued.update(part)
    f.glued["paper_cost"] = Markdown(plan.duration(paper_cost_s(STEM)))
    return f


def _verdicts(f: Findings):
    """The results page's rows of this chapter and the numbers behind them."""
    rows, big = f.rows, f.big
    out: dict[str, Any] = {f"v_{key}": Markdown(r.verdict) for key, r in rows.items()}
    out["verdict"] = verdicts.chapter_table(rows.values())
    out["verdict_note"] = Markdown(verdicts.POOLING_THRESHOLDS)
    t1 = rows["theorem1"].values
    order = np.argsort(-np.asarray(f.zeta, dtype=float))
    ok = f.paper.theorem1.stderr > 0  # offsets where the simulation has any spread
    out.update({"paper_gap": t1["gap_exact"], "paper_z": t1["z_exact"], "paper_gap_printed": t1["gap_printed"],
                "paper_hgap": 100 * rows["lemma1"].values["gap"], "spearman": rows["fig4b"].values["spearman"],
                "paper_exits": Markdown(prose.and_list([str(rows["fig4b"].values["exits"][i]) for i in order])),
                "zeta_max": float(max(f.zeta)), "zeta_min": float(min(f.zeta)),
                "paper_zetas": Markdown(prose.and_list([f"{float(z):.2f}" for z in f.zeta])),
                "paper_fig4b_ls": Markdown(prose.and_list([str(l) for l in big.train_ls])),
                "chance_z": 1 - (1 - math.erfc(t1["z_exact"] / math.sqrt(2))) ** int(ok.sum())})
    return out


def _settings(big: presets.Pooling):
    """The published settings the prose quotes."""
    out: dict[str, Any] = {"paper_sim_offsets": len(big.sim_ls)}
    out.update({k: getattr(big, k)
                for k in ("D", "S", "sim_D", "hess_D", "hess_n", "train_steps", "train_lr", "init_std")})
    out.update({"M": big.D // big.S, "paper_sim_samples": big.sim_n_train + big.sim_n_test,
                "paper_train_seeds": len(big.train_seeds)})
    return out


def _fig4a(f: Findings):
    """Fig. 4a in closed form: the printed constant in both conventions, where it is at chance, a few values."""
    D, S, eps, sigma = f.big.D, f.big.S, f.big.eps, f.big.sigma
    exact_2eps = pooling.bayes_accuracy(f.m_hat, S, 2 * eps, sigma).numpy()  # classes 2 eps apart
    chance = [int(l) for l in np.flatnonzero(np.isclose(f.exact, 0.5))]
    mid = D // S + D // (2 * S)
    return {"gap_our_convention": float(np.abs(f.printed - f.exact).max()),
            "gap_paper_convention": float(np.abs(f.printed - exact_2eps).max()),
            "chance_ls": Markdown(prose.and_list([str(l) for l in chance])), "acc_1": float(f.exact[1]),
            "acc_8": float(f.exact[8]), "l_mid": mid, "acc_mid": float(f.exact[mid])}



def _gaps(results):
    """The run's Monte-Carlo checks against the theory: Theorem 1's largest gap (exact; two standard errors; as
    printed) and Lemma 1's relative to the largest entry."""
    t1, l1 = results.theorem1, results.lemma1
    return (float(np.abs(t1.simulated - t1.theory).max()), float(2 * np.max(t1.stderr)),
            float(np.abs(t1.simulated - t1.paper).max()),
            float(np.abs(l1.monte_carlo - l1.theory).max() / np.abs(l1.theory).max()))


def run_numbers(cfg: presets.Pooling, results: ch2_pooling.PoolingResults) -> dict[str, Any]:
    """What the page's own run (`ch2_pooling.chapter_results` at the preset `cfg`) adds: Fig. 4b's plateau exits
    and zeta(l), the run's settings, and how far its Monte-Carlo checks lie from Theorem 1 (exact and as printed)
    and from Lemma 1."""
    gap, two_se, gap_printed, hgap = _gaps(results)
    return {"exits": Markdown(prose.and_list(int(e) for e in ch2_pooling.plateau_exit(results.fig4b))),
            "zetas": Markdown(prose.and_list(f"{float(z):.2f}" for z in ch2_pooling.fig4b_zeta(cfg))),
            "fig4b_ls": Markdown(prose.and_list(cfg.train_ls)), "smoke_offsets": len(cfg.sim_ls),
            "smoke_sim_D": cfg.sim_D, "smoke_hess_D": cfg.hess_D, "smoke_seeds": len(cfg.train_seeds),
            "smoke_steps": cfg.train_steps, "gap": gap, "two_se": two_se, "gap_printed": gap_printed,
            "hgap": 100 * hgap}


def smoke_claims(f: Findings, results: ch2_pooling.PoolingResults) -> str:
    """What the page's own run shows, as nbval compares it: gamma(l) and the Bayes accuracy at a few l (the
    published settings, in closed form), and the run's Monte-Carlo gaps and plateau exits."""
    gamma, (gap, two_se, gap_printed, hgap) = pooling.snr_gamma(f.m_hat, f.big.S), _gaps(results)
    lines = [f"l={l:3d}  gamma={gamma[l].item():8.3f}  accuracy={f.exact[l].item():.3f}  "
             f"(as printed: {f.printed[l].item():.3f})" for l in (1, 8, 24, 31, 40)]
    exits = [int(e) for e in ch2_pooling.plateau_exit(results.fig4b)]
    return "\n".join([*lines, f"Theorem 1: largest |simulated - theory| = {gap:.2f} (2 s.e. = {two_se:.2f})",
                      f"Theorem 1 as printed: largest |simulated - printed| = {gap_printed:.2f}",
                      f"Lemma 1: largest |Monte Carlo - theory| / max|theory| = {hgap:.2f}", f"plateau exits: {exits}"])
