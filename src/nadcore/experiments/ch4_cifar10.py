"""Chapter 4 (paper Sec. 4.2, Figs. 7-8): CIFAR-10 (or a stand-in: the digits, Fashion-MNIST) poisoned
with a NAD carrier, trained on NAD-flipped images, and the reviewers' NAD-edit test. Loading (the
`dataset` names of `nadcore.cifar.load`) and the NAD transforms are `nadcore.cifar`; the functions
here take the loaded images, whatever their dataset (the store keys hold their fingerprint)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import torch
from tqdm import tqdm

from nadcore import checks, cifar, presets, published, seeds, store, versions
from nadcore.checks import InputError
from nadcore.cifar import EDIT_MODES, as_nads, channel_stats, edit_nads, nad_flip, normalise, poison
from nadcore.device import resolve
from nadcore.experiments import ch3_nads
from nadcore.models import build
from nadcore.prose import and_list, name
from nadcore.train import Fit, Recipe, fit, predict

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from nadcore.nads.result import NADResult

RECIPE_KEYS = ("epochs", "max_lr", "momentum", "weight_decay", "batch_size")  # the stored recipe of Chapter 4


def _recipe(recipe):
    """The recipe (a preset's `Sgd`, or its dict) as stored with the results: exactly `RECIPE_KEYS`, checked
    by `train.Recipe`."""
    recipe = presets.as_dict(recipe)
    Recipe.from_settings(recipe, strict=True)
    if missing := [k for k in RECIPE_KEYS if k not in recipe]:
        raise InputError(f"recipe must give {', '.join(RECIPE_KEYS)}; missing {', '.join(missing)}")
    if extra := [k for k in recipe if k not in RECIPE_KEYS]:
        raise ValueError(f"recipe keys must be {', '.join(RECIPE_KEYS)} (inputs are normalised by `prepare`); "
                         f"got {', '.join(extra)}")
    return {k: recipe[k] for k in RECIPE_KEYS}


def train_network(arch: str, train: tuple[torch.Tensor, torch.Tensor], test: tuple[torch.Tensor, torch.Tensor],
                  recipe: presets.Sgd | Mapping[str, Any], device: str | torch.device = "auto", seed: int = 0,
                  progress: bool = False) -> tuple[torch.nn.Module, Fit]:
    """A fresh `arch` (3 channels, 10 logits) fitted on already-normalised `train`: `(model, its Fit)`.
    Its initialisation and shuffling are the `seeds.streams` of `seed` (the data are given): every run
    of one seed starts from the same network, so the runs of a curve differ by their data alone."""
    st = seeds.streams(seed)
    torch.manual_seed(st.init)
    model = build(arch, in_channels=train[0].shape[1], num_classes=10)
    out = fit(model, (train, test), Recipe.from_settings(_recipe(recipe)), device=device, seed=st.shuffle,
              progress=progress)
    return model, out


def prepare(x: torch.Tensor, mean: Sequence[float], std: Sequence[float],
            nads: NADResult | np.ndarray | torch.Tensor | None = None, y: torch.Tensor | None = None,
            index: int | None = None, eps: float = 0.05, flip: bool = False) -> torch.Tensor:
    """Pixel-space images to network inputs, in the authors' order: poison or flip, then normalise."""
    if index is not None:
        x = poison(x, y, nads, index, eps)
    if flip:
        x = nad_flip(x, nads)
    return normalise(x, mean, std)


def _run(results_dir, name, settings, compute, only_stored=False, device=None):
    settings = versions.stamp(settings, "cifar_run")
    if results_dir is None:
        return store.Result(compute(), store.make_record(settings, device=device))
    path = Path(results_dir) / "cifar10" / f"{name}-{store.key(settings)}.npz"
    return store.load(path, settings) if only_stored else store.cached(path, settings, compute, device=device)


def poisoning_run(arch: str, train: tuple[torch.Tensor, torch.Tensor], test: tuple[torch.Tensor, torch.Tensor],
                  nads: NADResult | np.ndarray | torch.Tensor, index: int | None, eps: float, mean: Sequence[float],
                  std: Sequence[float], recipe: presets.Sgd | Mapping[str, Any], device: str | torch.device = "auto",
                  seed: int = 0) -> dict[str, np.float64]:
    """Train on the train set poisoned at NAD `index` (None: clean); evaluate on clean test data.

    Returns `train_acc` (poisoned train set), `test_acc` (clean test set, Fig. 7) and
    `follow_rate`: the share of test images that, given the carrier of class `(y + 1) % 10`,
    are classified as that class (how much the network reads the carrier).
    """
    (x, y), (xt, yt) = train, test
    inputs = prepare(x, mean, std, nads, y, index, eps)
    model, out = train_network(arch, (inputs, y), (normalise(xt, mean, std), yt), recipe, device, seed)
    follow = float("nan")
    if index is not None:
        other = (yt + 1) % 10
        pred = predict(model, prepare(xt, mean, std, nads, other, index, eps), device=device)
        follow = 100.0 * (pred == other).float().mean().item()
    return {"train_acc": np.float64(out.train_acc), "test_acc": np.float64(out.test_acc),
            "follow_rate": np.float64(follow)}


def poisoning_curve(arch: str, train: tuple[torch.Tensor, torch.Tensor], test: tuple[torch.Tensor, torch.Tensor],
                    nads: NADResult | np.ndarray | torch.Tensor, indices: Sequence[int], eps: float,
                    mean: Sequence[float], std: Sequence[float], recipe: presets.Sgd | Mapping[str, Any],
                    device: str | torch.device = "auto", seed: int = 0, results_dir: str | Path | None = None,
                    progress: bool = True, only_stored: bool = False) -> dict[str, np.ndarray]:
    """Fig. 7: one network per carrier index in `indices` plus a clean baseline (index -1).

    Each run is cached on its own in `results_dir` (keyed on the data, NADs and recipe), so a
    long sweep resumes where it stopped (`only_stored`: read only; a missing run raises
    `FileNotFoundError`). Returns arrays `index`, `train_acc`, `test_acc`,
    `follow_rate` with the baseline first.
    """
    u = as_nads(nads, train[0])
    for i in indices:
        if not 0 <= int(i) <= len(u) - 2:
            raise InputError(f"indices must lie in 0..{len(u) - 2} (a carrier uses NADs i and i + 1); got {i}")
    base = {"arch": arch, "eps": eps, "mean": list(mean), "std": list(std), "recipe": _recipe(recipe),
            "seed": seed, "data": store.fingerprint(*train, *test), "nads": store.fingerprint(u)}
    rows = []
    for i in tqdm([None, *[int(i) for i in indices]], desc=f"poisoning {arch}", disable=not progress):
        res = _run(results_dir, f"poison-{arch}", {**base, "index": -1 if i is None else i},
                   lambda i=i: poisoning_run(arch, train, test, u, i, eps, mean, std, recipe, device, seed),
                   only_stored, resolve(device))
        rows.append((-1 if i is None else i, *(float(res[k]) for k in ("train_acc", "test_acc", "follow_rate"))))
    cols = np.array(rows, dtype=np.float64).T
    return {"index": cols[0].astype(np.int64), "train_acc": cols[1], "test_acc": cols[2], "follow_rate": cols[3]}


def flip_experiment(archs: Sequence[str], train: tuple[torch.Tensor, torch.Tensor],
                    test: tuple[torch.Tensor, torch.Tensor], nads: Mapping[str, NADResult | np.ndarray | torch.Tensor],
                    recipe: presets.Sgd | Mapping[str, Any], device: str | torch.device = "auto", seed: int = 0,
                    results_dir: str | Path | None = None, progress: bool = True,
                    only_stored: bool = False) -> dict[str, Any]:
    """Fig. 8: each network in `archs` trained on the original and on the NAD-flipped data.

    nads: a dict `arch -> NADs` (each network flipped with its own NADs). Both representations
    are normalised with their own train-set channel statistics. Returns `arch`, `original`,
    `flipped` (clean test accuracy in percent) and the matching train accuracies.
    """
    missing = [a for a in archs if a not in nads]
    if missing:
        raise InputError(f"nads must hold NADs for every arch in archs; missing {missing}")
    out = {"original": [], "flipped": [], "train_original": [], "train_flipped": []}
    data = store.fingerprint(*train, *test)
    for arch in tqdm(list(archs), desc="flip", disable=not progress):
        u = as_nads(nads[arch], train[0])
        for kind in ("original", "flipped"):
            settings = {"arch": arch, "kind": kind, "recipe": _recipe(recipe), "seed": seed,
                        "data": data, "nads": store.fingerprint(u)}
            compute = lambda kind=kind, u=u, arch=arch: flip_run(arch, train, test, u, kind, recipe, device, seed)
            res = _run(results_dir, f"flip-{arch}-{kind}", settings, compute, only_stored, resolve(device))
            out[kind].append(float(res["test_acc"]))
            out[f"train_{kind}"].append(float(res["train_acc"]))
    return {"arch": list(archs), **{k: np.array(v) for k, v in out.items()}}


def flip_run(arch: str, train: tuple[torch.Tensor, torch.Tensor], test: tuple[torch.Tensor, torch.Tensor],
             nads: NADResult | np.ndarray | torch.Tensor, kind: str, recipe: presets.Sgd | Mapping[str, Any],
             device: str | torch.device = "auto", seed: int = 0) -> dict[str, np.float64]:
    """One run of Fig. 8: `arch` trained on the `kind` ("original" or "flipped") representation of
    `train`, normalised with its own channel statistics; `train_acc` and `test_acc` (percent)."""
    if kind not in ("original", "flipped"):
        raise InputError(f"kind must be 'original' or 'flipped'; got {kind!r}")
    u = as_nads(nads, train[0])
    xs, xt = (train[0], test[0]) if kind == "original" else (nad_flip(train[0], u), nad_flip(test[0], u))
    mean, std = channel_stats(xs)
    _, fitted = train_network(arch, (normalise(xs, mean, std), train[1]), (normalise(xt, mean, std), test[1]),
                              recipe, device, seed)
    return {"train_acc": np.float64(fitted.train_acc), "test_acc": np.float64(fitted.test_acc)}


def clean_model(arch: str, train: tuple[torch.Tensor, torch.Tensor], test: tuple[torch.Tensor, torch.Tensor],
                mean: Sequence[float], std: Sequence[float], recipe: presets.Sgd | Mapping[str, Any],
                device: str | torch.device = "auto", seed: int = 0,
                results_dir: str | Path | None = None) -> tuple[torch.nn.Module, float]:
    """A network trained on the clean data (the reviewers' test needs one): `(model, test_acc)`.

    Its weights are cached in `results_dir` as a `.pt` file keyed on the settings.
    """
    settings = versions.stamp({"arch": arch, "kind": "clean", "mean": list(mean), "std": list(std),
                               "recipe": _recipe(recipe), "seed": seed, "data": store.fingerprint(*train, *test)},
                              "cifar_run")
    path = None if results_dir is None else Path(results_dir) / "cifar10" / f"clean-{arch}-{store.key(settings)}.pt"
    test_n = (normalise(test[0], mean, std), test[1])
    if path is not None and path.exists():
        try:
            state, _ = store.load_weights(path, settings)
            model = build(arch, in_channels=train[0].shape[1], num_classes=10)
            model.load_state_dict(state)
            return (model.to(resolve(device)),
                    100.0 * (predict(model, test_n[0], device=device) == test[1]).float().mean().item())
        except store.StoreError:
            pass
    model, out = train_network(arch, (normalise(train[0], mean, std), train[1]), test_n, recipe, device, seed)
    if path is not None:
        store.save_weights(path, model.state_dict(), settings, device=resolve(device))
    return model, float("nan") if out.test_acc is None else float(out.test_acc)   # None only for a replay


def reviewers_test(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor,
                   nads: NADResult | np.ndarray | torch.Tensor, mean: Sequence[float], std: Sequence[float],
                   ks: Sequence[int] = (2,),
                   modes: Sequence[str] = EDIT_MODES, size: float = 1.0,
                   device: str | torch.device = "auto") -> list[dict[str, Any]]:
    """Review 3, point 6: edit test points on the first vs the last `k` NADs of a trained network.

    For every `k` in `ks`, `where` in ("first", "last") and `mode` in `modes` (see `edit_nads`:
    "remove", "flip", or "shift" by a fixed pixel norm `size`), returns one row:
    `changed` (% of predictions that change), `accuracy` after the edit (%), and the size of
    the edit in pixel space, `norm` (mean ||x' - x||_2) and `relative` (mean ||x' - x|| / ||x||).
    """
    u = as_nads(nads, x)
    for k in ks:
        if not (checks.is_integer(k) and 1 <= k <= len(u) // 2):
            raise InputError(f"ks must hold ints in 1..{len(u) // 2}; got {k!r}")
    before = predict(model, normalise(x, mean, std), device=device)
    rows = []
    for k in ks:
        for where in ("first", "last"):
            idx = list(range(k)) if where == "first" else list(range(len(u) - k, len(u)))
            for mode in modes:
                edited = edit_nads(x, u, idx, mode, size)
                after = predict(model, normalise(edited, mean, std), device=device)
                delta = (edited - x).flatten(1).norm(dim=1)
                rows.append({"k": int(k), "where": where, "mode": mode,
                             "changed": 100.0 * (after != before).float().mean().item(),
                             "accuracy": 100.0 * (after == y).float().mean().item(),
                             "norm": delta.mean().item(),
                             "relative": (delta / x.flatten(1).norm(dim=1).clamp_min(1e-12)).mean().item()})
    return rows



def review(p: presets.Cifar10, data: ChapterData, nads: NADResult | np.ndarray, device: str | torch.device = "auto",
           seed: int = 0, results_dir: str | Path | None = None) -> tuple[float, list[dict[str, Any]]]:
    """The reviewers' test at the preset `p`: `(clean test accuracy, reviewers_test's rows)` of a `p.arch` network
    trained on the clean `data` (`clean_model`), its test points edited along `nads`."""
    model, clean_acc = clean_model(p.arch, data.train, data.test, data.mean, data.std, p.recipe, device=device,
                                   seed=seed, results_dir=results_dir)
    rows = reviewers_test(model, *data.test, nads, data.mean, data.std, ks=p.review_ks, size=p.review_size,
                          device=device)
    return clean_acc, rows


# ----------------------------------------------------------------------------- the chapter's data and NADs

class ChapterData(NamedTuple):
    """The chapter's data set (`p.dataset`): its train and test sets `(images, labels)`, their channel `mean` and
    `std` (`cifar.stats`), the first test image of each class `x` with its labels `y`, and the class `names`."""
    train: tuple[torch.Tensor, torch.Tensor]
    test: tuple[torch.Tensor, torch.Tensor]
    mean: tuple[float, ...]
    std: tuple[float, ...]
    x: torch.Tensor
    y: torch.Tensor
    names: tuple[str, ...]


def chapter_data(p: presets.Cifar10, data_root: str | Path, seed: int = 0, download: bool = False) -> ChapterData:
    """The data set of the preset `p` from `data_root` (`download` fetches CIFAR-10 where it is missing)."""
    train = cifar.load(p.dataset, data_root, train=True, download=download, seed=seed)
    test = cifar.load(p.dataset, data_root, train=False, download=download, seed=seed)
    first = cifar.first_of_each_class(test[1])
    return ChapterData(train, test, *cifar.stats(p.dataset, train[0]), test[0][first], test[1][first],
                       cifar.classes(p.dataset))


def nad_archs(p: presets.Cifar10) -> list[str]:
    """The networks whose NADs the chapter reads at the preset `p`: `p.arch`, then each of `p.flip_archs`."""
    return list(dict.fromkeys([p.arch, *p.flip_archs]))


def chapter_nads(p: presets.Cifar10, results_dir: str | Path, scale: str, device: str | torch.device = "auto",
                 progress: bool = False) -> dict[str, NADResult]:
    """The NADs of `p.arch` and of each of `p.flip_archs` from `p.nad_networks` networks (`ch3_nads.load_nads`)."""
    return {a: ch3_nads.load_nads(a, results_dir, scale=scale, num_networks=p.nad_networks, device=device,
                                  progress=progress) for a in nad_archs(p)}


# ----------------------------------------------------------------------------- readings of Fig. 7

HIJACK_MARGIN = 2.0   # points of test accuracy under the clean network's that count as a hijacked training


def published_curve() -> dict[str, np.ndarray]:
    """The paper's Fig. 7 (ResNet-18, CIFAR-10; `published.fig7`) as a curve of `poisoning_curve`'s form:
    `index` (-1: the clean network, whose accuracy Fig. 7 does not give: Fig. 8's, 89 %) and `test_acc`;
    no `follow_rate` (nan), which the paper does not report."""
    paper = published.fig7()
    index = np.concatenate([[-1], paper["index"]]).astype(np.int64)
    acc = np.concatenate([[published.fig8("resnet18")[0]], paper["accuracy"]]).astype(np.float64)
    return {"index": index, "test_acc": acc, "follow_rate": np.full(len(index), np.nan)}


@dataclass(frozen=True)
class CarrierReading:
    """What a Fig. 7 curve shows (`carrier_reading`): the `clean` network's accuracy, the carrier `indices`
    (ascending), those that hijack training (`hijacked`) and the others (`ignored`), `first` and `last`
    (`(index, accuracy)` of the first and last carrier), `ignored_range` and `hijacked_range` (`(min, max)`
    accuracy, None when the list is empty), `reach` (the largest hijacked index, None when none is) and
    `prefix` (whether the hijacked indices are exactly the first ones: one band of first NADs, then none)."""
    clean: float
    indices: list[int]
    hijacked: list[int]
    ignored: list[int]
    first: tuple[int, float]
    last: tuple[int, float]
    ignored_range: tuple[float, float] | None
    hijacked_range: tuple[float, float] | None
    reach: int | None
    prefix: bool


def carrier_reading(curve: Mapping[str, Any], margin: float = HIJACK_MARGIN) -> CarrierReading:
    """What a Fig. 7 curve (`poisoning_curve`'s dict, the clean network at index -1) shows (`CarrierReading`):
    which carrier indices hijack training (test accuracy more than `margin` points under the clean network's)
    and which are ignored (the others)."""
    checks.number("margin", margin, 0, inclusive=True, accepted="a number >= 0 (points of accuracy)")
    acc = dict(zip(np.asarray(curve["index"]).tolist(), np.asarray(curve["test_acc"], dtype=float).tolist()))
    if -1 not in acc or len(acc) < 2:
        raise InputError("curve must hold the clean network (index -1) and at least one carrier index")
    clean = acc.pop(-1)
    indices = sorted(acc)
    hijacked = [i for i in indices if acc[i] < clean - margin]
    ignored = [i for i in indices if i not in hijacked]
    span = lambda ids: (min(acc[i] for i in ids), max(acc[i] for i in ids)) if ids else None
    return CarrierReading(clean, indices, hijacked, ignored, (indices[0], acc[indices[0]]),
                          (indices[-1], acc[indices[-1]]), span(ignored), span(hijacked),
                          max(hijacked) if hijacked else None, hijacked == indices[:len(hijacked)])




def _hijack_reach(reading: CarrierReading) -> str:
    """Which carriers hijack training in a `carrier_reading`, in words."""
    h = reading.hijacked
    if not h:
        return "no carrier"
    if h == reading.indices and len(h) > 1:
        return f"every carrier up to NAD {h[-1]}"
    if len(h) == 1:
        return f"NAD {h[0]} only"
    return f"NADs {h[0]}–{h[-1]}" if reading.prefix else "NADs " + ", ".join(map(str, h))


def fig7_verdict(ours: Mapping[str, CarrierReading], paper: CarrierReading) -> dict[str, Any]:
    """Fig. 7 on our stand-ins against the paper's, from `carrier_reading`s: `ours` (`{dataset name:
    reading}`) and `paper` (of `published_curve`). Returns `first` (NAD 0 hijacks training in the paper
    and on every stand-in), `reach` (every carrier of ours up to the paper's reach hijacks training too,
    as the paper's do) and `text`, one sentence that says both, with the indices."""
    if not ours:
        raise InputError("ours must hold the reading of at least one stand-in")
    first = 0 in paper.hijacked and all(0 in r.hijacked for r in ours.values())
    top = paper.reach if paper.reach is not None else -1
    reach = all(i in r.hijacked for r in ours.values() for i in r.indices if i <= top)
    start = ("a carrier on NAD 0 hijacks training in the paper and on " + " and ".join(ours)) if first else \
        "a carrier on NAD 0 does not hijack training on every stand-in"
    here = ", ".join(f"on {name} {_hijack_reach(r)}" for name, r in ours.items())
    tail = f"its reach is {'' if reach else 'not '}reproduced: in the paper {_hijack_reach(paper)}, here {here}"
    return {"first": first, "reach": reach, "text": f"{start}; {tail}"}


# ----------------------------------------------------------------------------- numbers and readings for the prose

NAN = float("nan")   # what the prose reads for a run not computed
def _by_index(curve, key):
    return dict(zip(np.asarray(curve["index"]).tolist(), np.asarray(curve[key], dtype=float).tolist()))


def past_rank(indices: Iterable[int], rank: int) -> str:
    """The NAD indices of `indices` at or past `rank` (those of a covariance of that rank's null space), in
    words (`and_list`)."""
    return and_list([i for i in indices if i >= rank])


def curve_numbers(curve: Mapping[str, Any] | None, indices: Iterable[int], test_n: int | None = None,
                  margin: float = HIJACK_MARGIN) -> dict[str, Any]:
    """A stand-in's Fig. 7 by name, for the prose. From `curve` (`poisoning_curve`'s dict; None: not
    computed, every number nan) at the carrier `indices` it was run at: `clean`; `first`, `second`, `mid` and
    `last`, the accuracy with the carrier at `indices[0]`, `[1]`, `[2]` and `[-1]` (`second_index`,
    `mid_index`: those indices); `first_follow`, the share of test images that follow the first carrier;
    `rest_min`, the lowest accuracy past the first carrier; `later_min` and `later_max` from `indices[3]`
    (`later_from`) on; and from `carrier_reading` (`margin`): `reach` (the largest hijacked index),
    `ignored_from` (the lowest ignored one), `ign_lo` and `ign_hi` (the ignored carriers' accuracies),
    `ign_gap` (points the lowest of them is under clean) and, given the test set's size `test_n`,
    `ign_images` (those points in test images). A number that the curve does not hold is nan."""
    indices = [int(i) for i in indices]
    if not indices:
        raise InputError("indices must hold at least one carrier index; got none")
    at = lambda k: indices[k] if -len(indices) <= k < len(indices) else None   # noqa: E731
    acc = _by_index(curve, "test_acc") if curve is not None else {}
    follow = _by_index(curve, "follow_rate") if curve is not None else {}
    later = [acc[i] for i in indices[3:] if i in acc]
    rest = [acc[i] for i in indices[1:] if i in acc]
    out = {"clean": acc.get(-1, NAN), "first": acc.get(at(0), NAN), "first_follow": follow.get(at(0), NAN),
           "second": acc.get(at(1), NAN), "second_index": at(1) if at(1) is not None else NAN,
           "mid": acc.get(at(2), NAN), "mid_index": at(2) if at(2) is not None else NAN,
           "last": acc.get(at(-1), NAN), "rest_min": min(rest, default=NAN),
           "later_from": at(3) if at(3) is not None else NAN,
           "later_min": min(later, default=NAN), "later_max": max(later, default=NAN),
           "reach": NAN, "ignored_from": NAN, "ign_lo": NAN, "ign_hi": NAN, "ign_gap": NAN}
    if curve is not None:
        r = carrier_reading(curve, margin)
        out["reach"] = NAN if r.reach is None else r.reach
        if r.ignored_range is not None:
            lo, hi = r.ignored_range
            out.update(ignored_from=min(r.ignored), ign_lo=lo, ign_hi=hi, ign_gap=r.clean - lo)
    if test_n is not None:
        out["ign_images"] = NAN if out["ign_gap"] != out["ign_gap"] else round(out["ign_gap"] / 100 * test_n)
    return out


def flip_numbers(flip: Mapping[str, Any] | None, archs: Iterable[str], cnn: str = "lenet",
                 control: str = "logreg") -> dict[str, float]:
    """Fig. 8 of a run by name, for the prose: `{arch}_before` and `{arch}_after` (test accuracy on the
    original and on the flipped data) for each of `archs`, `{cnn}_drop` (the points the flip costs `cnn`)
    and `{control}_delta` (the points it moves `control`, either way). `flip` (`flip_experiment`'s dict;
    None: not computed) may hold other networks; one it lacks reads nan."""
    runs = {} if flip is None else {a: (float(o), float(f)) for a, o, f in
                                    zip(flip["arch"], flip["original"], flip["flipped"])}
    out = {}
    for a in archs:
        out[f"{a}_before"], out[f"{a}_after"] = runs.get(a, (NAN, NAN))
    (c0, c1), (l0, l1) = runs.get(cnn, (NAN, NAN)), runs.get(control, (NAN, NAN))
    return {**out, f"{cnn}_drop": c0 - c1, f"{control}_delta": abs(l0 - l1)}


PAPER_BANDS = ((10, 99), (500, 1023))   # the bands of carrier indices the chapter quotes the published Fig. 7 over


def paper_numbers(margin: float = HIJACK_MARGIN, bands: Iterable[tuple[int, int]] = PAPER_BANDS) -> dict[str, float]:
    """The published Figs. 7-8 by name, for the prose: of Fig. 7 (`published_curve`, `carrier_reading`)
    `clean`, `first`, `last` and `last_index`, `min_gap` (the points the mildest hijacked carrier is under
    clean), `b{lo}_lo` and `b{lo}_hi` (the lowest and highest accuracy at the carriers in each `(lo, hi)` of
    `bands`); of Fig. 8 (`published.FIG8`) `drop_min` and `drop_max` over its four CNNs, `deep_min` and
    `deep_max` over the three deeper ones, and LeNet's `lenet_before`, `lenet_after` and `lenet_drop`."""
    curve = published_curve()
    r = carrier_reading(curve, margin)
    out = {"clean": r.clean, "first": r.first[1], "last": r.last[1], "last_index": r.last[0],
           "min_gap": NAN if r.hijacked_range is None else r.clean - r.hijacked_range[1]}
    for lo, hi in bands:
        band = [float(a) for i, a in zip(curve["index"], curve["test_acc"]) if lo <= i <= hi]
        if not band:
            raise InputError(f"bands must each hold a published carrier; ({lo}, {hi}) holds none")
        out[f"b{lo}_lo"], out[f"b{lo}_hi"] = min(band), max(band)
    drops = {a: o - f for a, (o, f) in published.FIG8.items()}
    deep = [d for a, d in drops.items() if a != "lenet"]
    out.update(drop_min=min(drops.values()), drop_max=max(drops.values()), deep_min=min(deep), deep_max=max(deep),
               lenet_drop=drops["lenet"], lenet_before=published.FIG8["lenet"][0],
               lenet_after=published.FIG8["lenet"][1])
    return out


def runs_phrase(curve: Mapping[str, Any], seed: int, unit: str = "training run") -> str:
    """How many runs each point of a Fig. 7 `curve` is, in words: "one training run (seed 0)" when each
    carrier index was trained once (with `seed`), else "3 training runs" (`unit` names what is counted)."""
    counts = np.unique(np.asarray(curve["index"]), return_counts=True)[1]
    if not len(counts):
        raise InputError("curve must hold at least one run; got none")
    n = int(counts.max())
    return f"one {unit} (seed {seed})" if n == 1 else f"{n} {unit}s"


def flip_reading(flips: Mapping[str, Mapping[str, Any]], cnn: str = "lenet", control: str = "logreg",
                 margin: float = HIJACK_MARGIN, size: float | None = None) -> dict[str, Any]:
    """Whether the NAD flip points the paper's way on each run of `flips` (`{name: flip_experiment's dict}`,
    names as the prose writes them): it does when it costs `cnn` more than `margin` points and more than it
    moves the linear `control` (either way). The paper's sizes are not compared (other data and networks).
    Returns `same` (`{run: bool}`), `text` (for the verdict: "the flip points the paper's way", on which
    runs if not all; given a `size` in points, it names the runs where the flip costs `cnn` less) and
    `direction` (a sentence: "The direction is the paper's on both stand-ins")."""
    if not flips:
        raise InputError("flips must hold the flip of at least one run; got none")
    same, drops = {}, {}
    for run, flip in flips.items():
        n = flip_numbers(flip, (cnn, control), cnn, control)
        if n[f"{cnn}_drop"] != n[f"{cnn}_drop"] or n[f"{control}_delta"] != n[f"{control}_delta"]:
            raise ValueError(f"flips[{run!r}] must hold {cnn} and {control}; got {list(flip['arch'])}")
        drops[run] = n[f"{cnn}_drop"]
        same[run] = bool(drops[run] > margin and drops[run] > n[f"{control}_delta"])
    yes, no = [k for k, v in same.items() if v], [k for k, v in same.items() if not v]
    if not no:
        text = "the flip points the paper's way"
        where = "both stand-ins" if len(yes) == 2 else "every stand-in" if len(yes) > 2 else yes[0]
        direction = f"The direction is the paper's on {where}"
    elif not yes:
        text = "the flip does not point the paper's way"
        where = "either stand-in" if len(no) == 2 else "any stand-in" if len(no) > 2 else no[0]
        direction = f"The direction is not the paper's on {where}"
    else:
        text = f"the flip points the paper's way on {and_list(yes)}, not on {and_list(no)}"
        direction = f"The direction is the paper's on {and_list(yes)}, not on {and_list(no)}"
    small = [k for k in yes if size is not None and drops[k] < size]
    if small:
        costs = and_list(f"{drops[k]:.1f} points on {k}" for k in small)
        text += f" (it costs {name(cnn)} {costs}, under the {size:g} the claims table asks of a CNN)"
    return {"same": same, "text": text, "direction": direction}
