"""Networks in chunks: an estimate is cut at multiples of `CHUNK` networks; each chunk's gradients
(`chunk_arrays`) are stored one file each, and their float64 moments merged in order, so an estimate
is bitwise the same however it is batched, stored, interrupted and resumed (same device and thread
count), and memory does not grow with N. The two halves of the networks (even and odd indices) are
merged beside, for the split-half overlaps (`Halves`)."""

from __future__ import annotations

import copy
import itertools
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from nadcore import store, sweeps
from nadcore.checks import InputError
from nadcore.device import kept_memory
from nadcore.nads.gradients import (
    autograd_gradients,
    autograd_one,
    checked_first_layer,
    compiled_secant_gradient,
    mixed_gram,
    one_at_a_time,
    secant_gradient,
)
from nadcore.nads.networks import check_one_output, network
from nadcore.nads.result import TRUST_KS, eig_decreasing, subspace_overlaps

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
    from pathlib import Path

    from nadcore.nads.settings import EstimateSettings

CHUNK = 125  # networks per chunk: an estimate is cut at multiples of CHUNK (stored one file each)


def chunk_ranges(start: int, stop: int, size: int = CHUNK) -> list[tuple[int, int]]:
    """The `[a, b)` network ranges covering `[start, stop)`, cut at the multiples of `size`."""
    cuts = [start, *range((start // size + 1) * size, stop, size), stop]
    return [(a, b) for a, b in zip(cuts[:-1], cuts[1:])]


def chunk_arrays(factory: Callable[[], object], settings: EstimateSettings, x0: torch.Tensor, start: int,
                 stop: int, on_batch: Callable[[int], object] | None = None, verify: bool = True) -> dict[str, Any]:
    """What a stored chunk of networks `start .. stop - 1` holds, computed as `settings` (an
    `EstimateSettings`) say at `x0`: their `gradients` (count, D), in the estimator's dtype (float32),
    or, for `"hessian"`, `count` and the sum `m2` (D, D) of their mixed-derivative Gram matrices. A
    chunk's numbers depend only on its range and settings: networks are seeded by index and every
    batch has `settings.batch(device)` networks (the last one padded with copies, then dropped), so
    the kernels always see the same shapes. `on_batch(count)` is told the networks as they end: one at a time
    where they run one at a time (the secant, the Hessian), a batch at a time where they run together.
    `verify`: the secant's shortcut is checked on each network's own graph (`secant_gradient`); the registry's
    networks, whose forward reads no weight to choose its graph, pass False."""
    dev, s = x0.device, settings
    method, batch = s.method, s.batch(dev)
    rows, grams = [], None
    with kept_memory():   # every network allocates the same large tensors: their memory is reused
        for a in range(start, stop, batch):
            first = network(factory, s.seed, a, dev)
            if a == start:
                check_one_output(first, x0)
                layer = checked_first_layer(first, x0, s.step) if method == "secant" and not s.compiled else None
            rest = (network(factory, s.seed, i, dev) for i in range(a + 1, min(a + batch, stop)))
            G, gram = _batch_gradients(first, rest, s, x0, layer, batch, on_batch or (lambda count: None), verify)
            rows.append(G)
            grams = gram if grams is None else grams + gram
    G = torch.cat(rows)
    if not torch.isfinite(G).all():
        raise InputError(f"model must give finite outputs and gradients at the evaluation point: those of networks "
                         f"{start}..{stop - 1} are NaN or inf"
                         + (f" (or the secant's step {s.step!r} is too large for them)" if method == "secant" else ""))
    _check_distinct(G, start, method, s.step, x0)
    if method == "hessian":
        assert grams is not None   # start < stop: one batch at least
        return {"count": np.int64(len(G)), "m2": grams.cpu().numpy()}
    return {"gradients": G.cpu().numpy()}


def _batch_gradients(first, rest, s, x0, layer, batch, done, verify=True):
    """`(G, gram)`: the gradients (count, D) of one batch of networks, `first` then the iterator `rest`, as the
    settings `s` say (`layer`: the secant's first layer), and for `"hessian"` the sum of their Gram matrices
    (else None); `done(count)` is told the networks as they end. The Hessian and vmap take the batch as a list;
    networks that run one at a time are built as they are used: one network's memory at a time, reused by the next
    (VGG-11: 39 MB, not 16 or 32 times that, faulted in anew)."""
    def one(gradient, count=1):   # each network's gradient (a batch's, where they run together), told as it ends
        done(count)
        return gradient

    if s.method == "hessian":
        nets = [first, *rest]
        G = torch.stack([autograd_one(net, x0) for net in nets])  # only to detect repeated networks
        return G, sum(one(mixed_gram(net, x0)) for net in nets)
    nets = itertools.chain([first], rest)
    if s.method == "autograd" and not one_at_a_time(first, x0):   # vmapped: padded for its batch invariance
        nets = list(nets)
        try:
            pad = [copy.deepcopy(nets[-1]) for _ in range(batch - len(nets))]
        except Exception:   # noqa: BLE001 - a module that cannot be copied (torch's old weight_norm): one at a time
            return torch.stack([one(autograd_one(net, x0)) for net in nets]), None
        return one(autograd_gradients(nets + pad, x0)[:len(nets)], len(nets)), None
    if s.method == "autograd":
        return torch.stack([one(autograd_one(net, x0)) for net in nets]), None
    if s.compiled:
        return torch.stack([one(compiled_secant_gradient(net, x0, float(s.step), s.precision)) for net in nets]), None
    if s.precision != "float32":
        nets = (net.to(memory_format=torch.channels_last) for net in nets)
    return torch.stack([one(secant_gradient(net, x0, float(s.step), layer, s.precision, verify=verify))
                        for net in nets]), None


def moments(chunk: Mapping[str, Any]) -> dict[str, Any]:
    """`count`, `mean` (D,) and `m2` (D, D), float64 numpy, of a chunk (`chunk_arrays`): the mean and
    the centred sum of outer products of its gradients (computed on the CPU, in float64), or, for a
    `"hessian"` chunk, zero and the sum of its Gram matrices."""
    if "m2" in chunk:
        return {"count": np.int64(chunk["count"]), "mean": np.zeros(len(chunk["m2"])), "m2": chunk["m2"]}
    G = torch.from_numpy(np.asarray(chunk["gradients"])).to(torch.float64)
    mean = G.mean(0)
    C = G - mean
    return {"count": np.int64(len(G)), "mean": mean.numpy(), "m2": (C.T @ C).numpy()}


def chunk_moments(factory: Callable[[], object], settings: EstimateSettings, x0: torch.Tensor, start: int,
                  stop: int) -> dict[str, Any]:
    """`moments` of the chunk of networks `start .. stop - 1` (`chunk_arrays`)."""
    return moments(chunk_arrays(factory, settings, x0, start, stop))


def merge(chunks: Iterable[Mapping[str, Any]], method: str) -> np.ndarray:
    """The covariance (or, for `"hessian"`, the mean Gram matrix) of the networks of all `chunks`,
    merged in order (Chan et al.'s pairwise update, float64: `merged_moments`)."""
    merged = merged_moments(chunks, method)
    n, m2 = int(merged["count"]), merged["m2"]
    return m2 / n if method == "hessian" else m2 / (n - 1)


class Halves:
    """The moments of the two halves of an estimate's networks (even and odd indices; for the mixed
    Hessian, whose chunks keep only sums, alternate chunks), merged as the chunks pass."""

    def __init__(self, method: str) -> None:
        self.method, self.parts, self.index = method, ([], []), 0

    def moments(self, chunk: Mapping[str, Any], start: int) -> dict[str, Any]:
        """`moments(chunk)`, the chunk's halves kept aside (merged into one running sum each)."""
        if "m2" in chunk:
            self._add(self.index % 2, moments(chunk))
        else:
            G = np.asarray(chunk["gradients"])
            for half in (0, 1):
                rows = G[(half - start) % 2::2]
                if len(rows):
                    self._add(half, moments({"gradients": rows}))
        self.index += 1
        return moments(chunk)

    def _add(self, half, m):
        part = self.parts[half]
        part.append(m)
        if len(part) > 1:   # one running sum in memory per half
            part[:] = [merged_moments(part, self.method)]

    def overlaps(self, ks: Iterable[int] = TRUST_KS, threads: int | None = None) -> dict[str, np.ndarray] | None:
        """`{"ks", "overlap", "networks"}` of the two halves' leading NADs (`eig_decreasing` on `threads`)
        at the `ks` under both halves' rank and D, or None when a half is missing or too small (a mixed Hessian of one
        chunk, fewer than 4 networks)."""
        if not all(self.parts):
            return None
        counts = [int(p[0]["count"]) for p in self.parts]
        if min(counts) < 2:
            return None
        covs = [merge(p, self.method) for p in self.parts]
        D = len(covs[0])
        ks = [k for k in ks if k < D and k < min(counts)]   # within both halves' rank (n - 1 for a covariance)
        if not ks:
            return None
        tops = [_leading(c, max(ks), threads) for c in covs]
        return {"ks": np.array(ks), "overlap": subspace_overlaps(tops[0], tops[1], ks), "networks": np.array(counts)}


def merged_moments(parts: Iterable[Mapping[str, Any]], method: str) -> dict[str, Any]:
    """The `moments` of `parts` merged in order (Chan et al.'s pairwise update, float64), as one part
    (`merge` divides its `m2`)."""
    n, mean, m2 = 0, 0.0, 0.0
    for c in parts:
        nb = int(c["count"])
        delta = c["mean"] - mean
        total = n + nb
        mean = mean + delta * (nb / total)
        m2 = m2 + c["m2"] + (0.0 if method == "hessian" else np.outer(delta, delta) * (n * nb / total))
        n = total
    return {"count": np.int64(n), "mean": np.asarray(mean, dtype=np.float64) * np.ones(np.shape(m2)[0]), "m2": m2}


def _leading(matrix, k, threads):
    """The leading `k` eigenvectors (rows, decreasing eigenvalue) of a symmetric matrix, by the estimate's
    own `eig_decreasing` (bitwise the same in every process: scipy's partial eigh was not, between a
    sharded and a one-process run)."""
    return eig_decreasing(matrix, threads)[1][:k]


class Ledger:
    """Where each chunk of an estimate came from, recorded as the chunks pass (in order): its compute time
    (`durations`), the CPU or GPU that computed it (`machines`), its fingerprint (`digests`) and the trace of its
    `m2` (`traces`; a chunk recomputed on another CPU is compared by it)."""

    def __init__(self) -> None:
        self.durations: list[float] = []
        self.machines: list[str | None] = []
        self.digests: list[str] = []
        self.traces: list[float] = []

    def read(self, paths: Iterable[str | Path], cells: Iterable[dict[str, int]], settings: dict[str, Any],
             halves: Halves) -> Iterator[dict[str, Any]]:
        """The stored chunks' moments, read one at a time (their halves kept by `halves`)."""
        D = math.prod(settings["input_shape"]) if "input_shape" in settings else None
        for path, cell in zip(paths, cells):
            r = store.load(path, sweeps.cell_settings(cell, settings))
            check_chunk(path, r.arrays, cell["stop"] - cell["start"], D)
            self.durations.append(r.record["duration_s"] or 0.0)
            self.machines.append(r.record.get("machine") or "unknown")
            yield halves.moments(r.arrays, cell["start"])

    def fingerprinted(self, chunks: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
        """`chunks` unchanged, each one's digest and trace recorded as it passes."""
        for c in chunks:
            self.digests.append(store.fingerprint(c["mean"], c["m2"]))
            self.traces.append(float(np.trace(c["m2"])))
            yield c

    def arrays(self, ranges: Sequence[tuple[int, int]]) -> dict[str, np.ndarray]:
        """What an estimate stores of its chunks (`NADResult.chunks`): their `ranges` and this ledger."""
        return {"ranges": np.array(ranges), "digests": np.array(self.digests), "traces": np.array(self.traces),
                "machines": np.array(self.machines)}   # a resumed run's chunks may come from several CPUs


def check_chunk(path: str | Path, arrays: Mapping[str, Any], count: int, D: int | None) -> None:
    """A StoreError naming `path` unless its arrays are a chunk of `count` networks: `gradients` (count, D), or
    for the Hessian `count` and `m2` (D, D), of finite real floats (a file rebuilt with its own hashes)."""
    grads, m2 = arrays.get("gradients"), arrays.get("m2")
    shape = None if D is None else ((count, D) if grads is not None else (D, D))
    a = grads if grads is not None else m2
    ok = (a is not None and a.ndim == 2 and np.issubdtype(a.dtype, np.floating) and (shape is None or a.shape == shape)
          and (grads is not None or int(arrays.get("count", -1)) == count) and bool(np.isfinite(a).all()))
    if not ok:
        raise store.StoreError(f"{path} is no chunk of {count} networks' gradients (rows of D = {D}, finite real "
                               "floats); delete it to recompute")


def _check_distinct(G, start, method, step, x0):
    """A ValueError when two consecutive networks of the chunk starting at `start` have identical
    gradients: all zero (a secant step too small for float32, or an evaluation point that saturates
    the networks), or the same network built twice by the factory."""
    same = (G[1:] == G[:-1]).all(1) if G.shape[0] > 1 else G.new_zeros(0, dtype=torch.bool)
    if not same.any():
        return
    i = int(same.nonzero()[0])
    if not G[i].any():
        zero = ~G.any(1)
        which = (f"networks {start}..{start + len(G) - 1} are all zero" if zero.all() else
                 f"{int(zero.sum())} networks of {start}..{start + len(G) - 1} are all zero "
                 f"({start + i} and {start + i + 1} among them)")
        change = (f"step (got {step!r}; published: 100: the secant's differences vanish in float32) or "
                  if method == "secant" else "")
        raise InputError(f"model must depend on its input at the evaluation point: the gradients of {which} (a "
                         f"constant output, or a head initialised to zero as some timm models are); else change "
                         f"{change}eval_point (its largest |value| is {float(x0.abs().max()):.3g}: the networks may "
                         f"be saturated there)")
    raise ValueError("model factory returned the same network twice (two consecutive networks have identical "
                     "gradients): it must build a fresh, randomly initialised module on every call")
