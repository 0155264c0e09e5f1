"""A NAD estimate's result (`NADResult`), how far to trust it (`Trust`), and subspace overlaps."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from nadcore import checks, store
from nadcore.checks import InputError


@dataclass
class NADResult:
    """`eigenvalues` (decreasing) and `nads` (one unit-norm direction per row, same order)."""

    eigenvalues: np.ndarray
    nads: np.ndarray
    settings: dict
    record: dict = field(default_factory=dict)
    chunks: dict = field(default_factory=dict)   # `ranges` (C, 2), `digests`, `traces`, `machines` (C,)
    split_half: dict | None = None   # `ks`, `overlap`, `networks` (two halves): computed by `estimate`

    def __len__(self) -> int:
        return len(self.eigenvalues)

    @property
    def num_networks(self) -> int:
        """How many networks the estimate averaged (its stored settings')."""
        return int(self.settings["num_networks"])

    @property
    def precision(self) -> str:
        """The secant's precision as stored; float32 for results stored before precision was a setting."""
        return self.settings.get("precision", "float32")

    def images(self, k: int | None = None) -> np.ndarray:
        """The first `k` NADs (all by default) reshaped to the input shape."""
        shape = tuple(self.settings["input_shape"])
        return self.nads[:k].reshape(-1, *shape)

    def save(self, path: str | Path, duration: float | None = None, device: str | None = None,
             compact: bool = False) -> Path:
        """Write `eigenvalues` and `nads` (float16 when `compact`: overlaps change by < 1e-3), the
        chunk digests and the settings record to `path` (.npz, `nadcore.store`); `duration` and
        `device` default to those of the `estimate` that made the result."""
        arrays = {"eigenvalues": self.eigenvalues, "nads": self.nads.astype(np.float16 if compact else np.float32)}
        arrays.update({f"chunk_{k}": v for k, v in self.chunks.items()})
        if self.split_half is not None:
            arrays.update({f"split_half_{k}": np.asarray(v) for k, v in self.split_half.items()})
        duration = self.record.get("duration_s") if duration is None else duration
        device = self.record.get("device") if device is None else device
        self.record = store.save(path, arrays, self.settings, duration=duration, device=device).record
        return Path(path)

    @classmethod
    def load(cls, path: str | Path, settings: dict | None = None) -> NADResult:
        """Read a result written by `save`; with `settings`, raise `StoreError` unless they match."""
        res = store.load(path, settings)
        for name in ("eigenvalues", "nads"):
            if name not in res.arrays:
                raise store.StoreError(f"{path} holds no {name!r} array: it is not a NAD result")
        chunks = {k[len("chunk_"):]: v for k, v in res.arrays.items() if k.startswith("chunk_")}
        half = {k[len("split_half_"):]: v for k, v in res.arrays.items() if k.startswith("split_half_")} or None
        return cls(res["eigenvalues"], res["nads"].astype(np.float32), res.settings, res.record, chunks, half)

    def trust(self) -> Trust:
        """How far to trust the leading NADs: a `Trust` of the split-half subspace overlaps at
        k = 1, 4, 16 (the NADs of the even- and of the odd-numbered networks of this estimate,
        computed by `estimate` from the chunks it merged: no extra networks) beside chance, k / D.
        Results stored before these overlaps were kept say "not available"."""
        D = int(self.nads.shape[1])
        spectrum = np.asarray(self.eigenvalues, dtype=np.float64)
        n = self.settings.get("num_networks")
        if self.split_half is None:
            return Trust(D, None, None, None, spectrum, n)
        h = self.split_half
        return Trust(D, np.asarray(h["ks"]), np.asarray(h["overlap"], dtype=np.float64), np.asarray(h["networks"]),
                     spectrum, n)


class NADTrustWarning(UserWarning):
    """An estimate whose leading NADs are not above chance (`Trust`): too few networks."""


TRUST_KS = (1, 4, 16)
TRUST_SIGMAS = 5   # "above chance": at least twice chance (k / D) and this many standard deviations above it
TRUST_WEAK = 0.5   # above chance but below this overlap: the halves agree weakly
BLOCK_GAP = 3.0    # a leading block: lambda drops by at least this factor after it ...
BLOCK_FLAT = 0.5   # ... while its own eigenvalues stay within this fraction of lambda_0 (near-degenerate)
BULK_SLACK = 1.2   # isotropic: lambda_0 within this factor of the isotropic bulk's edge at N networks


@dataclass
class Trust:
    """Split-half subspace overlaps of a NAD estimate (`NADResult.trust`).

    `overlap[j]` is the overlap (`subspace_overlap`) of the leading `ks[j]` NADs of two disjoint
    halves of the estimate's networks (even and odd indices; `networks`: their sizes); `chance` is
    k / D, the mean overlap of random subspaces. The overlap at k is *above chance* when it exceeds
    chance by `margin(k)` = max(k / D, TRUST_SIGMAS sqrt(2) / D): it is at least twice chance and
    five standard deviations of the overlap of random subspaces above it (their standard deviation
    is about sqrt(2) / D for k << D, measured 0.92-1.03 sqrt(2) / D at D = 64 and 1,024, k = 1, 4,
    16). Above chance but under TRUST_WEAK (0.5) the halves agree weakly: more networks would move
    the NADs. The full estimate (both halves) is closer to the exact NADs than either half."""

    D: int
    ks: np.ndarray | None
    overlap: np.ndarray | None
    networks: np.ndarray | None
    spectrum: np.ndarray | None = None   # the estimate's eigenvalues, decreasing
    num_networks: int | None = None

    def _rank(self):
        """How many eigenvalues carry information: at most N - 1 (the covariance is mean-centred) and D."""
        n = len(self.spectrum) if self.spectrum is not None else 0
        return min(n, self.D, (self.num_networks or n + 1) - 1)

    @property
    def block(self) -> int | None:
        """The size b of a near-degenerate leading block of the spectrum, or None: the largest drop
        lambda_{b-1} / lambda_b (at least `BLOCK_GAP`, b at most half the rank) after eigenvalues that all stay
        within `BLOCK_FLAT` of lambda_0. Its subspace is identifiable; single NADs inside it are not."""
        r = self._rank()
        if self.spectrum is None or r < 4:
            return None
        lam = np.maximum(self.spectrum[:r], 1e-300)
        drops = lam[:-1] / lam[1:]
        b = int(np.argmax(drops[: r // 2])) + 1
        if b < 2 or drops[b - 1] < BLOCK_GAP or lam[b - 1] / lam[0] < BLOCK_FLAT:
            return None
        return b

    @property
    def isotropic(self) -> bool | None:
        """True when lambda_0 lies within the bulk that an isotropic gradient covariance would give at these N
        networks (the Marchenko-Pastur edge (1 + sqrt(D / N))^2 times the mean eigenvalue, with `BULK_SLACK`):
        no preferred direction is detected at this N. None when the spectrum or N is unknown."""
        r = self._rank()
        if self.spectrum is None or not self.num_networks or r < 2:
            return None
        mean = float(np.mean(self.spectrum[:r])) * r / self.D if r < self.D else float(np.mean(self.spectrum[:r]))
        edge = (1 + np.sqrt(self.D / self.num_networks)) ** 2
        return bool(self.spectrum[0] <= BULK_SLACK * edge * mean)

    @property
    def available(self) -> bool:
        return self.overlap is not None

    @property
    def chance(self) -> np.ndarray | None:
        return None if self.ks is None else self.ks / self.D

    def margin(self, k: int) -> float:
        return max(k / self.D, TRUST_SIGMAS * np.sqrt(2) / self.D)

    def _measured(self):
        """`(ks, overlap, networks)`, or None when not available."""
        if self.ks is None or self.overlap is None or self.networks is None:
            return None
        return self.ks, self.overlap, self.networks

    @property
    def above(self) -> np.ndarray | None:
        """Per k, whether the split-half overlap is above chance (by `margin`)."""
        measured = self._measured()
        if measured is None:
            return None
        ks, overlap, _ = measured
        return np.array([o >= k / self.D + self.margin(k) for k, o in zip(ks, overlap)])

    @property
    def leading_above_chance(self) -> bool | None:
        """True when the leading NAD (the smallest k) is above chance; None when not available."""
        above = self.above
        return None if above is None else bool(above[0])

    @property
    def label(self) -> str:
        """A few words for a figure of the NADs: what of them is identifiable ("" when not available)."""
        above = self.above
        if above is None:
            return ""
        if self.block is not None:
            return f"the leading {self.block}-dimensional subspace is identified, not its single NADs"
        if not above.any():
            return "no preferred direction (a flat spectrum)" if self.isotropic else "NOT above chance: noise"
        if not above[0]:
            return "the leading NAD is NOT above chance"
        weak = (measured := self._measured()) is not None and measured[1][0] < TRUST_WEAK
        return f"the leading NAD is {'weakly ' if weak else ''}above chance"

    def summary(self) -> str:
        """One line: the overlaps beside chance, and a verdict."""
        measured, above = self._measured(), self.above
        if measured is None or above is None:
            return ("split-half overlap: not available (too few networks to split in two halves of two, or a result "
                    "stored before it was kept)")
        ks, overlap, networks = measured
        chance = lambda c: f"{c:.3f}" if c >= 0.001 else f"{c:.1e}"   # noqa: E731  (k / D: 1 / 3,072 is 3.3e-04)
        cells = ", ".join(f"k={k}: {o:.3f} (chance {chance(k / self.D)})" for k, o in zip(ks, overlap))
        n = "/".join(str(int(x)) for x in networks)
        weak = [int(k) for k, o in zip(ks, overlap) if o < TRUST_WEAK]
        per_k = "; ".join(f"k={k} {'above' if a else 'NOT above'} chance" for k, a in zip(ks, above))
        block, flat = self.block, self.isotropic
        lam = self.spectrum
        if block is not None and lam is not None:
            drop = lam[block - 1] / lam[block]
            verdict = (f"{per_k}: the leading {block}-dimensional subspace is identified (lambda drops "
                       f"{f'{drop:.0f}x' if drop < 1e3 else 'over 1,000x'} after NAD {block - 1}), single NADs inside "
                       "it are not "
                       f"(lambda_{block - 1}/lambda_0 = {lam[block - 1] / lam[0]:.2f}) at any number of networks")
        elif not above.any() and flat:
            verdict = ("NOT above chance at any k, and a flat spectrum (lambda_0 within the isotropic bulk at "
                       f"{self.num_networks} networks): no preferred direction detected; more networks tell isotropy "
                       "from weak anisotropy")
        elif above.all():
            every = ("above chance at every k" if len(ks) > 1 else
                     f"above chance at k={int(ks[0])}, the only k {self.num_networks} networks measure")
            verdict = every + (f" (weakly at k={', '.join(map(str, weak))}: overlap < {TRUST_WEAK}, more networks "
                               "would move them)" if weak else "")
        elif not above.any():
            verdict = "NOT above chance at any k: sampling noise, use more networks"
        else:
            verdict = (f"{per_k}: reproducible up to k={int(ks[np.flatnonzero(above)[-1]])}" if not above[0] else
                       f"above chance up to k={int(ks[np.flatnonzero(~above)[0] - 1])} only")
            if not above[0]:
                verdict += "; the leading NAD alone is NOT: use more networks"
        return f"split-half overlap ({n} networks): {cells}; {verdict}"


# ----------------------------------------------------------------------------- eigenvectors and subspaces

def eig_decreasing(matrix: np.ndarray | torch.Tensor, threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (decreasing) and eigenvectors as rows of a symmetric matrix; each row's
    largest-magnitude entry is made positive so results are reproducible. `threads`: the threads
    of the decomposition (its bits depend on them; one thread is also fast on a loaded machine,
    where two spin: 0.28 s against 0.72 s for D = 1,024 beside a busy process); None: the caller's."""
    matrix = torch.as_tensor(matrix, dtype=torch.float64).cpu()
    if matrix.dim() != 2 or matrix.shape[0] != matrix.shape[1] or not bool(torch.isfinite(matrix).all()):
        raise InputError(f"matrix must be a square matrix of finite numbers; got shape {tuple(matrix.shape)}"
                         + ("" if matrix.dim() != 2 or matrix.shape[0] != matrix.shape[1] else " with NaN or inf"))
    before = torch.get_num_threads()
    torch.set_num_threads(threads or before)
    try:
        vals, vecs = torch.linalg.eigh((matrix + matrix.T) / 2)
    finally:
        torch.set_num_threads(before)
    vals, rows = vals.flip(0), vecs.flip(1).T
    pivot = rows.gather(1, rows.abs().argmax(1, keepdim=True))
    rows = rows * torch.where(pivot < 0, -1.0, 1.0).to(rows.dtype)
    return vals.numpy(), rows.numpy()


def _bases(U, V):
    """`U`, `V` as float64 arrays of rows of one dimension D, finite; an InputError otherwise."""
    U, V = np.asarray(U, dtype=np.float64), np.asarray(V, dtype=np.float64)
    if U.ndim != 2 or V.ndim != 2 or U.shape[1] != V.shape[1]:
        raise InputError(f"U and V must be rows of directions of one dimension (K, D); got shapes {U.shape} and "
                         f"{V.shape}")
    if not (np.isfinite(U).all() and np.isfinite(V).all()):
        raise InputError("U and V must be finite (NaN or inf in a basis)")
    return U, V


def _full_rank(U, V):
    """An InputError unless the rows of `U` and of `V` are linearly independent (a zero row spans nothing)."""
    for name, W in (("U", U), ("V", V)):
        s = np.linalg.svd(W, compute_uv=False)
        if s[-1] <= 1e-10 * max(s[0], 1e-300):
            raise InputError(f"{name} must have linearly independent rows (its first {len(W)} span fewer dimensions)")


def subspace_overlap(U: np.ndarray, V: np.ndarray, k: int) -> float:
    """Mean squared cosine of the principal angles between the spans of the first `k` rows of U
    and of V: 1 for the same subspace, about k / D for random ones."""
    U, V = _bases(U, V)
    checks.integer("k", k, 1, min(len(U), len(V)), accepted=f"an integer in [1, {min(len(U), len(V))}] (rows of U, V)")
    U, V = U[:k], V[:k]
    _full_rank(U, V)
    cos = np.linalg.svd(np.linalg.qr(U.T)[0].T @ np.linalg.qr(V.T)[0], compute_uv=False)
    return float(np.mean(np.clip(cos, 0, 1) ** 2))


def subspace_overlaps(U: np.ndarray, V: np.ndarray, ks: Iterable[int]) -> np.ndarray:
    """`subspace_overlap(U, V, k)` for each k of `ks` (equal to within 1e-12) from one QR of each
    basis: Gram-Schmidt bases are nested, and the squared cosines of the principal angles sum to the
    squared Frobenius norm of `Qu_k^T Qv_k`. For reading; `compare` computes the stored overlaps."""
    U, V = _bases(U, V)
    if checks.is_integer(ks) or not isinstance(ks, Iterable):
        raise InputError(f"ks must be a list of subspace sizes k, such as [1, 4, 16]; got {ks!r}")
    ks = [checks.integer("ks", k, 1, min(len(U), len(V)), accepted=f"integers in [1, {min(len(U), len(V))}]")
          for k in ks]
    if not ks:
        raise InputError("ks must hold one or more subspace sizes k")
    top = max(ks)
    _full_rank(U[:top], V[:top])
    qu, qv = (np.linalg.qr(np.asarray(W, dtype=np.float64)[:top].T)[0] for W in (U, V))
    block = (qu.T @ qv) ** 2
    return np.array([block[:k, :k].sum() / k for k in ks])


def compare(a: NADResult, b: NADResult, ks: Iterable[int]) -> np.ndarray:
    """Subspace overlaps (see `subspace_overlap`) of two NAD bases for each k in `ks`."""
    return np.array([subspace_overlap(a.nads, b.nads, k) for k in ks])


def result_path(arch: str, settings: dict, results_dir: str | Path) -> Path:
    """Where a full estimate of `arch` made with `settings` is kept inside `results_dir` (by
    `experiments.ch3_nads.load_nads`, the CLI and the bundle)."""
    if not (isinstance(arch, str) and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}", arch)):
        raise InputError(f"arch must be a file-name-safe name (letters, digits, _ . + -); got {arch!r}")
    return Path(results_dir) / "nads" / f"{arch}_{store.key(settings)}.npz"
