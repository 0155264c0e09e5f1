"""Pooling as an anisotropic channel: aliasing, gamma, Theorem 1 and Lemma 1 (Sec. 2.1-2.2), for
1-D signals and 2-D images alike.

Conventions. A signal has `dims` = 1 axis of D samples (the paper's R^D) or 2 axes (D x D images);
`x_hat` is its unitary DFT over them. A linear pooling layer of factor S is a circular convolution
with a prefilter followed by keeping every S-th sample on each axis; its spectral response `m_hat`
(shape (D,) or (D, D), `prefilter`) satisfies `fft(conv(x)) = m_hat * x_hat`, and the spectrum of
the output is `z_hat = A (m_hat * x_hat)` with `A = [I_M ... I_M] / sqrt(S)`, M = D / S, on each
axis (Eq. 1). A 2-D prefilter is separable, m_hat[ky, kx] = m[ky] m[kx] (rows ky, as `fft2`).
`pool` runs a prefilter with taps ("average", "binomial3", "binomial5") as torch runs the layer
(`avg_pool1d(x, S)` is `pool(x, "average", S)`, `models.BlurPool2d` the binomials with "reflect").

Data follow the book's D(v): `x = s (eps / 2) v + P_perp(sigma n)`, classes eps apart. For a real
Fourier direction v (sine or cosine at frequency l, or (kx, ky): `fourier.directions`), the Bayes
accuracy after pooling is `Phi(eps gamma / (2 sigma sqrt(S^dims)))` with the paper's gamma of
Eq. 2, the S^dims aliases of an output bin in place of the S of 1-D (derivation in
`bayes_accuracy`). The paper prints `1 - Q(sqrt(2) eps gamma / (2 sigma))`, whose argument is
sqrt(2 S) times larger (1-D); it is offered as `convention="paper"`. `direction_bayes_accuracy`
checks the closed forms by linear algebra (any padding), `simulated_accuracy` and `theorem1_check`
against samples.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import torch
from torch import nn
from tqdm import tqdm

from nadcore import checks, data, fourier, seeds
from nadcore.checks import InputError
from nadcore.device import resolve
from nadcore.models import binomial_filter

if TYPE_CHECKING:
    import numpy as np

TAPS = ("average", "binomial3", "binomial5")      # prefilters with taps: layers torch runs
CASCADES = tuple(f"{k}_x2" for k in TAPS)         # two poolings of factor 2 in a row: one of factor 4
MODEL_NAMES = {"avg": "average", "blur3": "binomial3", "blur5": "binomial5"}  # models.LENET_POOLINGS spelling
PREFILTERS = ("average", "gaussian", "ideal", "binomial3", "binomial5")
PADDINGS = ("circular", "reflect", "zeros")
CONVENTIONS = ("exact", "paper")
SIM_METHODS = ("lda", "snr")
_FFT = {1: torch.fft.fft, 2: torch.fft.fft2}      # torch.fft.fftn(x, dim=(-1,)) rounds otherwise than fft
_IFFT = {1: torch.fft.ifft, 2: torch.fft.ifft2}
_CONV = {1: nn.functional.conv1d, 2: nn.functional.conv2d}


# ----------------------------------------------------------------------------- checks

def check_factor(D: int, S: int) -> int:
    """Raise a ValueError unless S is an integer >= 1 that divides the integer D >= 1; return M = D / S."""
    checks.integer("D", D, 1, accepted="a positive integer")
    checks.allocation("D", D, 8.0 * D * D, "a D x D float64 matrix (its aliasing and pooling matrices)")
    checks.integer("S", S, 1, accepted="an integer >= 1 (the subsampling factor)")
    if D % S:
        divisors = [s for s in range(1, D + 1) if D % s == 0]
        raise InputError(f"S must divide D={D} (accepted: {divisors}); got S={S}")
    return D // S


def _dims(dims):
    if dims not in (1, 2):
        raise InputError(f"dims must be 1 (signals) or 2 (images); got {dims!r}")
    return dims


INTEGERS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _spectrum(m_hat, name="m_hat"):
    """m_hat as float64 (complex128 if complex), checked: shape (D,) or (D, D)."""
    try:
        m_hat = torch.as_tensor(m_hat)
    except (TypeError, RuntimeError, ValueError):
        raise InputError(f"{name} must be an array of spectral values (numbers); got {type(m_hat).__name__}") from None
    if not (m_hat.dtype.is_floating_point or m_hat.dtype.is_complex or m_hat.dtype in INTEGERS):
        raise InputError(f"{name} must be an array of spectral values (numbers); got dtype {m_hat.dtype}")
    if m_hat.ndim not in (1, 2) or m_hat.numel() == 0 or len(set(m_hat.shape)) != 1:
        raise InputError(f"{name} must be a spectral response of shape (D,) or (D, D); got shape {tuple(m_hat.shape)}")
    if not torch.isfinite(m_hat).all():
        raise InputError(f"{name} must hold finite spectral values; got {int((~torch.isfinite(m_hat)).sum())} "
                         "NaN or infinite")
    return m_hat.to(torch.complex128 if m_hat.is_complex() else torch.float64)


def _kind(kind):
    """A prefilter's name, the model names (avg, blur3, blur5) read as theirs."""
    kind = MODEL_NAMES.get(kind, kind)
    if kind not in PREFILTERS + CASCADES:
        raise InputError(f"kind must be one of {', '.join(PREFILTERS + CASCADES)} (or avg, blur3, blur5), or an "
                         f"array of spectral values; got {kind!r}")
    return kind


# ----------------------------------------------------------------------------- prefilters

def prefilter_taps(kind: str, S: int = 2) -> tuple[torch.Tensor, int]:
    """The 1-D taps of a prefilter with taps and how many come before the output sample: output n
    of the 1-D filter is `sum_j taps[j] x[n - before + j]` (float64); a 2-D filter is their outer product.

    "average": S taps 1/S, before = 0 (the window of `avg_pool1d(x, S)`, one-sided).
    "binomial3", "binomial5": `models.binomial_filter` ([1, 2, 1] / 4, [1, 4, 6, 4, 1] / 16),
    centred, before = 1 and 2 (the blur of `models.BlurPool2d`).
    "average_x2", "binomial3_x2", "binomial5_x2" (S must be 4): that pooling with factor 2 applied
    twice, as one pooling of factor 4 (LeNet's two pooling layers without the layers between):
    with taps t and b before, output k is sum_{i, j} t[i] t[j] x[4k - 3b + i + 2j], so the taps are
    c[q] = sum_{i + 2j = q} t[i] t[j] and 3b come before.
    """
    kind = _kind(kind)
    if kind not in TAPS + CASCADES:
        raise InputError(f"kind must be one of {', '.join(TAPS + CASCADES)} (a prefilter with taps); got {kind!r}")
    checks.integer("S", S, 1, accepted="an integer >= 1 (the subsampling factor)")
    if kind in CASCADES:
        if S != 4:
            raise InputError(f"S must be 4 for {kind} (two poolings of factor 2); got {S}")
        t, b = prefilter_taps(kind[:-3], 2)
        c = torch.zeros(3 * (len(t) - 1) + 1, dtype=torch.float64)
        for j, tj in enumerate(t.tolist()):
            c[2 * j:2 * j + len(t)] += tj * t
        return c, 3 * b
    if kind == "average":
        return torch.full((S,), 1.0 / S, dtype=torch.float64), 0
    size = int(kind[-1])
    return binomial_filter(size, torch.float64), (size - 1) // 2


def prefilter(kind: str | torch.Tensor | np.ndarray, D: int, S: int, width: float | None = None,
              dims: int = 1) -> torch.Tensor:
    """Spectral response m_hat of a pooling prefilter, shape (D,) for signals, (D, D) for images (`dims`).

    kind: a prefilter with taps (`prefilter_taps`: "average", complex because the window is
    one-sided; "binomial3", "binomial5", real, cos(pi f / D)^(2, 4); the cascades `CASCADES`),
    "gaussian" (a circular Gaussian kernel of spatial std `width`, default S / 2),
    "ideal" (low-pass keeping |f| < M/2, half power at |f| = M/2 so that it stays real),
    or an array of spectral values of that shape: any spectral response you like.
    An image's prefilter is separable: the outer product of the signal's.
    """
    M = check_factor(D, S)
    _dims(dims)
    if not isinstance(kind, str):
        m_hat = _spectrum(kind, "prefilter")
        if m_hat.shape != (D,) * dims:
            raise ValueError(f"a user prefilter must have D={D} spectral values on each of its {dims} axes; "
                             f"got shape {tuple(m_hat.shape)}")
        return m_hat
    kind = _kind(kind)
    if kind == "gaussian":
        w = checks.number("width", S / 2 if width is None else width, 0)
        t = torch.arange(D, dtype=torch.float64)
        t = torch.minimum(t, D - t)
        h = torch.exp(-0.5 * (t / w) ** 2)
        m = torch.fft.fft(h / h.sum()).real.to(torch.float64)
    elif kind == "ideal":
        f = torch.fft.fftfreq(D, d=1.0 / D, dtype=torch.float64).abs()
        m = (f < M / 2).to(torch.float64)
        m[f == M / 2] = math.sqrt(0.5)
    else:
        taps, before = prefilter_taps(kind, S)
        h = torch.zeros(D, dtype=torch.float64)
        for j, t in enumerate(taps.tolist()):
            h[(before - j) % D] += t
        m = torch.fft.fft(h)
    return m if dims == 1 else torch.outer(m, m)


# ----------------------------------------------------------------------------- Eq. 1

def aliasing_matrix(D: int, S: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The M x D aliasing matrix A = [I_M ... I_M] / sqrt(S) of Eq. 1 (M = D / S)."""
    M = check_factor(D, S)
    return torch.eye(M, dtype=dtype).repeat(1, S) / math.sqrt(S)


def pool_spectrum(x_hat: torch.Tensor | np.ndarray, m_hat: torch.Tensor | np.ndarray, S: int) -> torch.Tensor:
    """Spectrum of the pooled signal, z_hat = A (m_hat * x_hat) (Eq. 1), over the last m_hat.ndim axes:
    the S^dims aliases of each output bin summed, over sqrt(S^dims)."""
    m_hat = _spectrum(m_hat)
    dims, D = m_hat.ndim, m_hat.shape[0]
    M = check_factor(D, S)
    x_hat = torch.as_tensor(x_hat)
    if x_hat.shape[-dims:] != m_hat.shape:
        raise InputError(f"x_hat must end in the shape {tuple(m_hat.shape)} of m_hat; got {tuple(x_hat.shape)}")
    lead = x_hat.shape[:-dims]
    y = (m_hat.to(x_hat.device) * x_hat).reshape(*lead, *(S, M) * dims)
    aliases = tuple(range(len(lead), y.ndim, 2))
    return y.sum(aliases[0] - y.ndim if dims == 1 else aliases) / math.sqrt(S ** dims)


def pool(x: torch.Tensor | np.ndarray, prefilter: str | torch.Tensor | np.ndarray, S: int, dims: int = 1,
         padding: str = "circular") -> torch.Tensor:
    """Pool real signals x (..., D) (`dims` 1) or images (..., D, D) (`dims` 2): prefilter, then every
    S-th sample on each axis.

    A prefilter with taps (`prefilter_taps`, by name) runs as torch runs the layer, in x's dtype:
    `padding`, then conv1d / conv2d with the (outer product of the) taps and stride S. "circular" is
    the circular convolution the theory assumes (Eq. 1), "reflect" what `models.BlurPool2d` does,
    "zeros" zero padding; the average never reaches its padding (all three are `avg_pool`).
    Any other prefilter ("gaussian", "ideal", a spectral response m_hat, whose ndim is `dims`) is a
    circular convolution through the FFT, in float64.
    """
    if padding not in PADDINGS:
        raise InputError(f"padding must be one of {', '.join(PADDINGS)}; got {padding!r}")
    x = torch.as_tensor(x)
    if isinstance(prefilter, str) and MODEL_NAMES.get(prefilter, prefilter) in TAPS + CASCADES:
        return _pool_taps(x, prefilter, S, _dims(dims), padding)
    if padding != "circular":
        raise InputError(f"padding must be circular for a prefilter without taps; got {padding!r}")
    m_hat = _spectrum(prefilter) if not isinstance(prefilter, str) else _response(prefilter, x, S, dims)
    dims = m_hat.ndim
    check_factor(m_hat.shape[0], S)
    y = _IFFT[dims](_FFT[dims](x.to(torch.float64)) * m_hat.to(x.device))
    return y.real[(..., *[slice(None, None, S)] * dims)]


def _response(kind, x, S, dims):
    """`prefilter(kind)` for the signals or images x (side x.shape[-1])."""
    return prefilter(kind, int(x.shape[-1]), S, dims=_dims(dims))


def _pool_taps(x, kind, S, dims, padding):
    if x.dim() < dims:
        raise InputError(f"x must have {dims} axes to pool; got shape {tuple(x.shape)}")
    shape = x.shape[-dims:]
    for n in shape:
        check_factor(int(n), S)
    taps, before = prefilter_taps(kind, S)
    kernel = taps if dims == 1 else torch.outer(taps, taps)
    flat = x.reshape(-1, 1, *shape)
    kernel = kernel.to(flat.dtype if flat.is_floating_point() else torch.float64)
    flat = flat.to(kernel.dtype)
    mode = {"circular": "circular", "reflect": "reflect", "zeros": "constant"}[padding]
    flat = nn.functional.pad(flat, (before, len(taps) - 1 - before) * dims, mode=mode)
    out = _CONV[dims](flat, kernel[None, None], stride=S)
    return out.reshape(*x.shape[:-dims], *(n // S for n in shape))


def pooling_matrix(prefilter: str | torch.Tensor | np.ndarray, S: int, D: int | None = None, dims: int = 1,
                   padding: str = "circular") -> torch.Tensor:
    """The real matrix P of `pool` on signals or images of side D (float64): (D/S)^dims x D^dims.
    A spectral response gives D and dims itself."""
    if not isinstance(prefilter, str):
        prefilter = _spectrum(prefilter)
        D, dims = prefilter.shape[0], prefilter.ndim
    D = checks.integer("D", D, 1, accepted="a positive int (the side; given by a spectral response itself)")
    checks.allocation("D", D, 8.0 * D ** (2 * dims), "the float64 identity it pools")
    eye = torch.eye(D ** dims, dtype=torch.float64).reshape(-1, *(D,) * dims)
    return pool(eye, prefilter, S, dims, padding).reshape(D ** dims, -1).T.contiguous()


# ----------------------------------------------------------------------------- Theorem 1

def snr_gamma(m_hat: torch.Tensor | np.ndarray, S: int, cells: fourier.Grid | Iterable[Any] | None = None,
              kind: str = "sin") -> torch.Tensor:
    """gamma of Theorem 1 (Eq. 2) for every frequency of m_hat (shape (D,) or (D, D)), or for the real
    Fourier direction (`fourier.directions(cells, D, kind)`) at each of `cells` (a tensor (N,)).

    gamma^2(k) = S^dims |m[k]|^2 / sum_{j ~ k, j != k} |m[j]|^2, j running over the S^dims aliases of k
    (on each axis k + a M, M = D / S): +inf where the aliases are filtered out (no noise reaches the
    output bin of k), 0 where m[k] = 0. This is the gamma of the complex exponential at k, and of the
    real sine/cosine whenever k and -k do not alias onto one output bin. Where they do (2k = 0 mod M
    on every axis, e.g. (8, 0) for S = 2 on 32x32) the two conjugate components add coherently and
    gamma depends on the phase (a sine there is zeroed by the centred binomial filters, its samples
    landing on the sine's zeros): there gamma^2 = S^dims q / (1 - q) with q of `pooled_fraction`.
    """
    m2 = _spectrum(m_hat).abs() ** 2
    dims, D = m2.ndim, m2.shape[0]
    M = check_factor(D, S)
    offsets = [o for o in itertools.product(range(S), repeat=dims) if any(o)]
    rolled = (torch.stack([m2.roll([-k * M for k in o], list(range(dims))) for o in offsets]) if offsets
              else m2.new_zeros(1, *m2.shape))
    gamma2 = torch.where(m2 > 0, S ** dims * m2 / rolled.sum(0), torch.zeros_like(m2))
    if cells is None:
        return gamma2.sqrt()
    if kind not in fourier.KINDS:
        raise InputError(f"kind must be one of {', '.join(fourier.KINDS)}; got {kind!r}")
    freqs = fourier.cells(cells, D)
    wrong = next((c for c in freqs if isinstance(c, tuple) != (dims == 2)), None)
    if wrong is not None:
        raise InputError(f"cells must be {'(kx, ky) pairs' if dims == 2 else 'ints l'} for a {dims}-D spectrum; "
                         f"got {wrong!r}")
    return _direction_gamma(m_hat, S, gamma2.sqrt(), freqs, kind)


def _direction_gamma(m_hat, S, gamma, cells, kind):
    """gamma at each cell, from `pooled_fraction` where the cell aliases onto its conjugate."""
    D = gamma.shape[0]
    M = D // S
    at = lambda c: gamma[c % D] if gamma.ndim == 1 else gamma[c[1] % D, c[0] % D]  # noqa: E731
    out = torch.stack([at(c) for c in cells]) if cells else gamma.new_zeros(0)
    self_aliased = [i for i, c in enumerate(cells) if all(2 * k % M == 0 for k in ((c,) if gamma.ndim == 1 else c))]
    if self_aliased:
        q, r = pooled_fraction(fourier.directions([cells[i] for i in self_aliased], D, kind), m_hat, S)
        exact = math.sqrt(S ** gamma.ndim) * (q / r).sqrt()  # q / 0 = inf: no noise reaches the bins
        out[self_aliased] = torch.where(q > 1e-20, exact, 0.0)  # below: the rounding of a null
    return out


def pooled_fraction(directions: torch.Tensor | np.ndarray, m_hat: torch.Tensor | np.ndarray,
                    S: int) -> tuple[torch.Tensor, torch.Tensor]:
    """q = u^T (P P^T)^+ u with u = P v for each unit direction v of `directions` (N, *m_hat.shape),
    P the circular pooling by m_hat: the share of v that stays distinguishable from the noise after
    pooling; returns (q, 1 - q), tensors (N,).

    Closed form (unitary DFTs): the output bin t of the pooled spectrum is
    z_hat[t] = S^(-dims/2) sum_{j ~ t} m_hat[j] v_hat[j] (Eq. 1) and P P^T is diagonal in that basis, so
        q = sum_t |sum_{j ~ t} m_hat[j] v_hat[j]|^2 / sum_{j ~ t} |m_hat[j]|^2.
    1 - q is summed without cancellation, by Lagrange's identity per output bin:
    w |v|^2 - |sum m v|^2 = sum_{j < l} |m_j v_l - m_l v_j|^2 (w = sum |m_j|^2), so that gamma stays
    exact where q is within 1e-8 of 1.
    """
    m_hat = _spectrum(m_hat)
    dims, D = m_hat.ndim, m_hat.shape[0]
    check_factor(D, S)
    directions = torch.as_tensor(directions, dtype=torch.float64).reshape(-1, *m_hat.shape)
    m = _aliases_first(m_hat, S, dims)
    v_hat = _aliases_first(_FFT[dims](directions, norm="ortho"), S, dims)  # (N, aliases, bins)
    bins = tuple(range(-dims, 0))
    z = (m * v_hat).sum(1)
    w = (m.abs() ** 2).sum(0)
    cross = (m[None, :, None] * v_hat[:, None, :] - m[None, None, :] * v_hat[:, :, None]).abs() ** 2
    lost = cross.sum((1, 2)) / 2  # sum over ordered pairs, halved
    safe = torch.where(w > 0, w, 1.0)
    q = torch.where(w > 0, z.abs() ** 2 / safe, 0.0).sum(bins)
    r = torch.where(w > 0, lost / safe, (v_hat.abs() ** 2).sum(1)).sum(bins)
    return q.clamp(0.0, 1.0), r.clamp(0.0, 1.0)


def _aliases_first(a, S, dims):
    """a (..., D[, D]) as (..., S^dims aliases, M[, M] output bins): index j = t + (a M) on each axis."""
    lead, M = a.ndim - dims, a.shape[-1] // S
    a = a.reshape(*a.shape[:lead], *(S, M) * dims)
    order = (*range(lead), *(lead + 2 * i for i in range(dims)), *(lead + 2 * i + 1 for i in range(dims)))
    return a.permute(order).reshape(*a.shape[:lead], S ** dims, *(M,) * dims)


def bayes_accuracy(m_hat: torch.Tensor | np.ndarray, S: int, eps: float, sigma: float, convention: str = "exact",
                   cells: fourier.Grid | Iterable[Any] | None = None, kind: str = "sin") -> torch.Tensor:
    """Best achievable accuracy after pooling on D(v) for every frequency (or the directions at
    `cells`, as `snr_gamma`) (Theorem 1).

    "exact" (default): Phi(eps gamma / (2 sigma sqrt(S^dims))) for the book's D(v) (classes eps apart,
    noise projected off v). Derivation: the pooled data are Gaussian with means +-(eps/2) Pv and
    covariance sigma^2 P (I - vv^T) P^T; by Sherman-Morrison the Mahalanobis distance between the
    classes is eps / sigma * sqrt(q / (1 - q)) with q of `pooled_fraction`, and
    q / (1 - q) = gamma^2 / S^dims. `direction_bayes_accuracy` covers every v.
    "paper": 1 - Q(sqrt(2) eps gamma / (2 sigma)), the formula as printed in Theorem 1.
    The printed argument is sqrt(2 S) times the exact one on the book's 1-D data, and sqrt(S / 2) times
    it in the paper's own convention x = eps y v + w (classes 2 eps apart), whose exact accuracy is
    `bayes_accuracy(m_hat, S, 2 * eps, sigma)` = Phi(eps gamma / (sigma sqrt(S))).
    """
    eps = checks.number("eps", eps, 0)
    sigma = checks.number("sigma", sigma, 0)
    if convention not in CONVENTIONS:
        raise InputError(f"convention must be one of {', '.join(CONVENTIONS)}; got {convention!r}")
    gamma = snr_gamma(m_hat, S, cells, kind)
    if convention == "exact":
        arg = eps * gamma / (2 * sigma * math.sqrt(S ** _spectrum(m_hat).ndim))
    else:
        arg = math.sqrt(2) * eps * gamma / (2 * sigma)
    return torch.special.ndtr(arg)


# Theorem 1 in the paper's own convention (Sec. 2): x = eps y v + w, classes at +-eps (2 eps apart), for the
# paper's real Fourier directions and real noise ("real"), or for its literal complex direction
# v_l = F^-1(e_l) with circular complex noise of the same power ("complex").
PAPER_DIRECTIONS = ("real", "complex")


def paper_bayes_accuracy(m_hat: torch.Tensor | np.ndarray, S: int, eps: float, sigma: float, direction: str = "real",
                         cells: fourier.Grid | Iterable[Any] | None = None, kind: str = "sin") -> torch.Tensor:
    """The exact Bayes accuracy of Theorem 1 in the paper's convention (classes at +-eps), 1-D, as `bayes_accuracy`.

    "real": Phi(eps gamma / (sigma sqrt(S))), `bayes_accuracy` at classes 2 eps apart; the printed (2),
    Phi(sqrt(2) eps gamma / (2 sigma)), has an argument sqrt(S / 2) times this one. "complex": the pooled bin
    of l carries a y + n with a = m[l] eps / sqrt(S) and circular noise of variance sum_k |m[l + kM]|^2 sigma^2 / S,
    whose real part along a has half of it: Phi(sqrt(2) eps gamma / (sigma sqrt(S))), the printed (2) at S = 4.
    `simulated_paper_accuracy` checks both against samples."""
    if direction not in PAPER_DIRECTIONS:
        raise InputError(f"direction must be one of {', '.join(PAPER_DIRECTIONS)}; got {direction!r}")
    if _spectrum(m_hat).ndim != 1:
        raise InputError("m_hat must be 1-D (shape (D,)): the paper states Theorem 1 for signals in R^D")
    if direction == "real":
        return bayes_accuracy(m_hat, S, 2 * checks.number("eps", eps, 0), sigma, "exact", cells, kind)
    eps, sigma = checks.number("eps", eps, 0), checks.number("sigma", sigma, 0)
    return torch.special.ndtr(math.sqrt(2) * eps * snr_gamma(m_hat, S, cells, kind) / (sigma * math.sqrt(S)))


def simulated_paper_accuracy(l: int, m_hat: torch.Tensor | np.ndarray, S: int, eps: float = 1.0, sigma: float = 1.0,
                             direction: str = "complex", n_train: int = 20000, n_test: int = 20000,
                             seed: int = 0) -> float:
    """A Monte-Carlo Theorem 1 in the paper's convention: samples x = eps y v_l + w of `paper_bayes_accuracy`'s
    `direction` ("complex": v_l = F^-1(e_l), w circular complex Gaussian of covariance sigma^2 (I - v v^H);
    "real": the sine at l, real noise) pooled as Eq. 1 says (z = A (m * x_hat)), a linear discriminant fitted
    on `n_train` of them (the real and imaginary parts of z) and scored on `n_test` others."""
    if direction not in PAPER_DIRECTIONS:
        raise InputError(f"direction must be one of {', '.join(PAPER_DIRECTIONS)}; got {direction!r}")
    checks.integer("l", l)
    eps, sigma = checks.number("eps", eps, 0, inclusive=True), checks.number("sigma", sigma, 0)
    for name, n in (("n_train", n_train), ("n_test", n_test)):
        checks.integer(name, n, 2, 10 ** 7)
    m_hat = _spectrum(m_hat).to(torch.complex128)
    D = m_hat.numel()
    checks.integer("l", l, 0, D - 1, accepted=f"a frequency in [0, D) = [0, {D})")
    check_factor(D, S)
    g = torch.Generator().manual_seed(seeds.check_seed(seed))
    if direction == "complex":
        v_hat = torch.zeros(D, dtype=torch.complex128)
        v_hat[l % D] = 1.0                                         # v_l = F^-1(e_l), unitary: x_hat = eps y e_l + w_hat
    else:
        v_hat = torch.fft.fft(fourier.directions([l], D, "sin")[0].double(), norm="ortho")

    def draw(n):
        y = torch.randint(0, 2, (n,), generator=g).double() * 2 - 1
        re, im = (torch.randn(n, D, generator=g, dtype=torch.float64) for _ in range(2))
        w = torch.complex(re, im) / math.sqrt(2) if direction == "complex" else re.to(torch.complex128)
        w_hat = torch.fft.fft(w, norm="ortho") if direction == "real" else w
        w_hat = w_hat - (w_hat @ v_hat.conj())[:, None] * v_hat   # noise off v: sigma^2 (I - v v^H)
        z = pool_spectrum(eps * y[:, None] * v_hat + sigma * w_hat, m_hat, S)
        return torch.cat([z.real, z.imag], 1), (y > 0).long()

    (xt, yt), (xs, ys) = draw(n_train), draw(n_test)
    return float(_lda_accuracy(xt, yt, xs, ys))


def direction_bayes_accuracy(directions: torch.Tensor | np.ndarray, prefilter: str | torch.Tensor | np.ndarray, S: int,
                             eps: float, sigma: float, dims: int = 1, padding: str = "circular") -> torch.Tensor:
    """Bayes accuracy after `pool` for each direction of `directions` (N, D) or (N, [1,] D, D) (`dims`;
    a spectral response gives it), by linear algebra on `pooling_matrix` (any padding), a tensor (N,).

    With u = P v (v normalised) and Sigma_0 = P P^T, q = u^T Sigma_0^+ u and the accuracy is
    Phi(eps / (2 sigma) sqrt(q / (1 - q))) (1 when q = 1: the classes separate perfectly).
    """
    eps, sigma = checks.number("eps", eps, 0), checks.number("sigma", sigma, 0)
    vs = torch.as_tensor(directions, dtype=torch.float64)
    if vs.dim() < 2 or len(vs) == 0:
        raise InputError(f"directions must hold one or more directions (N, D) or (N, [1,] D, D); got shape "
                         f"{tuple(vs.shape)}")
    P = pooling_matrix(prefilter, S, int(vs.shape[-1]), dims, padding)
    vs = vs.reshape(len(vs), -1)
    if vs.shape[1] != P.shape[1]:
        raise InputError(f"directions must hold {P.shape[1]} entries each; got shape {tuple(vs.shape)}")
    if not (torch.isfinite(vs).all() and (vs.abs().amax(1) > 0).all()):
        raise InputError("directions must be finite and non-zero (each is normalised); got a zero or non-finite one")
    vs = vs / vs.abs().amax(1, keepdim=True)   # so that normalising cannot overflow (a direction of scale 1e300)
    inverse = torch.linalg.pinv(P @ P.T, hermitian=True)
    return torch.tensor([_separation(P @ (v / v.norm()), inverse, eps, sigma) for v in vs], dtype=torch.float64)


def _separation(u, inverse, eps, sigma):
    q = min(max(float(u @ inverse @ u), 0.0), 1.0)
    if q >= 1 - 1e-12:
        return 1.0
    return float(torch.special.ndtr(torch.tensor(eps / (2 * sigma) * math.sqrt(q / (1 - q)), dtype=torch.float64)))


# ----------------------------------------------------------------------------- Theorem 1 against samples

def _class_statistics(z, y):
    """Class means and the pooled within-class covariance (n - 2 degrees of freedom), float64."""
    mu0, mu1 = z[y == 0].mean(0), z[y == 1].mean(0)
    centred = torch.cat([z[y == 0] - mu0, z[y == 1] - mu1])
    return mu0, mu1, centred.T @ centred / (len(z) - 2)


def _lda_accuracy(zt, yt, zs, ys):
    """Test accuracy of LDA (the Bayes rule for two Gaussians with a shared covariance) fitted on (zt, yt)."""
    mu0, mu1, cov = _class_statistics(zt, yt)
    w = torch.linalg.pinv(cov, hermitian=True) @ (mu1 - mu0)
    pred = ((zs - (mu0 + mu1) / 2) @ w > 0).long()
    return float((pred == ys).double().mean())


def _snr_accuracy(z, y):
    """Phi(Delta / 2) with Delta^2 the unbiased estimate of the squared Mahalanobis distance between
    the two classes of (z, y): (n - p - 3) / (n - 2) D^2 - p n / (n0 n1), D^2 = d^T S^-1 d with the
    pooled covariance S (n - 2 degrees of freedom), clamped at 0."""
    mu0, mu1, cov = _class_statistics(z, y)
    d = mu0 - mu1
    n, p = len(z), z.shape[1]
    n0 = int((y == 0).sum())
    D2 = float(d @ torch.linalg.solve(cov, d))
    delta2 = max(0.0, (n - p - 3) / (n - 2) * D2 - p * n / (n0 * (n - n0)))
    return float(torch.special.ndtr(torch.tensor(math.sqrt(delta2) / 2, dtype=torch.float64)))


def simulated_accuracy(cell: int | Sequence[int], prefilter: str | torch.Tensor | np.ndarray = "average", S: int = 4,
                       eps: float = 1.0, sigma: float = 1.0, n_train: int = 20000, n_test: int = 20000, seed: int = 0,
                       size: int = 128, kind: str = "sin", padding: str = "circular", method: str = "lda") -> float:
    """The accuracy reached on samples of D(v) pooled by `pool`, v the Fourier direction at `cell`
    (`fourier.directions`: an int l for signals of length `size`, (kx, ky) for size x size images).

    The samples are `data.directional_dataset(v, n, sigma, eps)` (training and test sets from the
    seeds `seeds.derive(seed, TRAIN)` and `(seed, TEST)`), float32, pooled as torch pools them
    (a prefilter with taps, e.g. "average": `avg_pool1d`) or in float64 (`pool`), then analysed in
    float64. `method` "lda": test accuracy on `n_test` samples of LDA fitted on `n_train` (it falls
    short of the Bayes accuracy by about 0.01 at n_train = 10000 in 256 dimensions: the fitted
    covariance is noisy). "snr": Phi(Delta / 2) with the pooled classes' Mahalanobis distance Delta
    estimated without bias from the `n_train` samples (Lachenbruch's correction; `n_test` unused):
    the Bayes accuracy itself, estimated from samples.
    """
    if method not in SIM_METHODS:
        raise InputError(f"method must be one of {', '.join(SIM_METHODS)}; got {method!r}")
    check_factor(size, S)
    eps, sigma = checks.number("eps", eps, 0), checks.number("sigma", sigma, 0)
    v = fourier.directions([cell], size, kind)
    dims = v.ndim - 1
    v = v.reshape(1, -1) if dims == 1 else v  # `data.directional_dataset` reads a signal as a 1 x D image
    sets = ((seeds.TRAIN, n_train),) if method == "snr" else ((seeds.TRAIN, n_train), (seeds.TEST, n_test))
    pooled = []
    for role, n in sets:
        x, y = data.directional_dataset(v, n, sigma, eps, seed=seeds.derive(seed, role))
        z = pool(x.reshape(n, *(size,) * dims), prefilter, S, dims, padding)
        pooled.append((z.reshape(n, -1).double(), y))
    return _snr_accuracy(*pooled[0]) if method == "snr" else _lda_accuracy(*pooled[0], *pooled[1])


def theorem1_check(prefilter: str | torch.Tensor | np.ndarray = "average",
                   cells: fourier.Grid | Iterable[Any] = (1, 3, 5, 7), S: int = 4, eps: float = 1.0, sigma: float = 1.0,
                   n_train: int = 10000, n_test: int = 20000, seed: int = 0, size: int = 64, kind: str = "sin",
                   padding: str = "circular", method: str = "lda", progress: bool = True) -> dict[str, torch.Tensor]:
    """Theorem 1 against samples pooled by `pool`, for the Fourier directions at `cells` (ints l of
    signals of length `size`, or (kx, ky) of size x size images).

    Returns arrays `l` (or `kx`, `ky`), `theory` (`bayes_accuracy`, exact convention), `paper` (the
    printed formula), `direction` (`direction_bayes_accuracy` with `padding`), `simulated`
    (`simulated_accuracy` with `method`, seeded by `seeds.derive(seed, *cell mod size)`) and `stderr`:
    for "lda" the binomial standard error of the test accuracy; for "snr" a delta-method approximation,
    phi(Delta / 2) / 2 times the standard deviation of the estimated Delta, from var(Delta^2) ~
    4 c Delta^2 + 2 c^2 p + Delta^4 / (2 (n - p)) with c = 4 / n_train and p the pooled dimension
    (Delta ~ Delta^2 near 0: there 0.45 sqrt of that variance).
    """
    cells = fourier.cells(cells, size)
    vs = fourier.directions(cells, size, kind)
    dims = vs.ndim - 1
    m_hat = _response(prefilter, vs, S, dims) if isinstance(prefilter, str) else prefilter
    exact, paper = (bayes_accuracy(m_hat, S, eps, sigma, c, cells, kind) for c in CONVENTIONS)
    sim = torch.tensor([simulated_accuracy(c, prefilter, S, eps, sigma, n_train, n_test,
                                           seeds.derive(seed, *[k % size for k in ((c,) if dims == 1 else c)]),
                                           size, kind, padding, method)
                        for c in tqdm(cells, disable=not progress, desc="Theorem 1")], dtype=torch.float64)
    coords = {"l": torch.tensor(cells)} if dims == 1 else {"kx": torch.tensor([c[0] for c in cells]),
                                                           "ky": torch.tensor([c[1] for c in cells])}
    layer = m_hat if padding == "circular" else prefilter  # the theory's circular convolution, or the layer's
    direction = direction_bayes_accuracy(vs, layer, S, eps, sigma, dims, padding)
    return coords | {"theory": exact, "paper": paper, "direction": direction, "simulated": sim,
                     "stderr": ((sim * (1 - sim) / n_test).sqrt() if method == "lda"
                                else _snr_stderr(sim, n_train, (size // S) ** dims))}


def _snr_stderr(acc, n, p):
    """Approximate standard error of `_snr_accuracy` at estimated accuracies `acc` (see `theorem1_check`)."""
    delta = 2 * torch.special.ndtri(acc.clamp(0.5, 1 - 1e-12))
    c = 4.0 / n
    var = 4 * c * delta**2 + 2 * c**2 * p + delta**4 / (2 * (n - p))
    sd_delta = torch.where(delta**2 > var.sqrt(), var.sqrt() / (2 * delta.clamp_min(1e-12)), 0.45 * var.pow(0.25))
    return torch.exp(-delta**2 / 8) / math.sqrt(2 * math.pi) / 2 * sd_delta


# ----------------------------------------------------------------------------- Sec. 2.2: the linear model

class LinearPooling(nn.Module):
    """The deep linear model of pooling f(x) = theta^T A (m * phi * x) of Sec. 2.2.

    x holds D spectral coefficients (any trailing shape with D entries, e.g. 1x32x32 for D=1024);
    the output has shape (N, 1). theta ~ N(0, sigma_theta^2 I_M), phi ~ N(0, sigma_phi^2 I_D).
    By Eq. 4 its NADs are the canonical basis vectors ordered by decreasing m^2.
    """
    m: torch.Tensor   # buffers (`register_buffer`)
    A: torch.Tensor

    def __init__(self, m: torch.Tensor | np.ndarray, S: int, sigma_theta: float = 1.0, sigma_phi: float = 1.0,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        m = _spectrum(m, "m").abs().to(torch.float32)
        D = m.numel()
        M = check_factor(D, S)
        self.S = S
        self.register_buffer("m", m)
        self.register_buffer("A", aliasing_matrix(D, S, dtype=torch.float32))
        self.theta = nn.Parameter(checks.number("sigma_theta", sigma_theta, 0) * torch.randn(M, generator=generator))
        self.phi = nn.Parameter(checks.number("sigma_phi", sigma_phi, 0) * torch.randn(D, generator=generator))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear_pooling_output(self.theta, self.phi, x.reshape(x.shape[0], -1), self.m, self.A)[:, None]


def linear_pooling_output(theta: torch.Tensor, phi: torch.Tensor, x: torch.Tensor, m: torch.Tensor,
                          A: torch.Tensor) -> torch.Tensor:
    """f(x) = theta^T A (m * phi * x) for a batch x (N, D); theta may be (M,) or one per sample (N, M)."""
    return (((m * phi * x) @ A.T) * theta).sum(-1)


def linear_pooling_model(m: torch.Tensor | np.ndarray | None = None, S: int = 4, D: int = 128, sigma_theta: float = 1.0,
                         sigma_phi: float = 1.0, seed: int | None = None) -> LinearPooling:
    """A freshly initialised `LinearPooling` (m defaults to |average prefilter|); `seed` fixes theta, phi."""
    m = prefilter("average", D, S) if m is None else m
    g = None if seed is None else torch.Generator().manual_seed(seed)
    return LinearPooling(m, S, sigma_theta, sigma_phi, generator=g)


def spectral_dataset(l: int, D: int, n: int, eps: float, sigma: float,
                     generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The data of Sec. 2.2: x = eps y e_l + w, w ~ N(0, sigma^2 I_D), y = +-1 (half each)."""
    if not 0 <= l < D:
        raise InputError(f"l must be in [0, D={D}); got {l}")
    checks.integer("n", n, 1)
    checks.allocation("n", n, 4.0 * n * D, "the float32 samples")
    y = 1.0 - 2.0 * (torch.arange(n) % 2).float()
    x = sigma * torch.randn(n, D, generator=generator)
    x[:, l] += eps * y
    return x, y


def train_linear_pooling(l: int, m: torch.Tensor | np.ndarray, S: int, eps: float = 1.0, sigma: float = 1.0,
                         n: int = 1000, steps: int = 300, lr: float = 0.05, sigma_theta: float = 1.0,
                         sigma_phi: float = 1.0, seed: int = 0, device: str | torch.device = "cpu") -> torch.Tensor:
    """Train the linear model with the quadratic loss (y - f(x))^2 by full-batch gradient descent.

    Returns the training loss at every step (length `steps`), as in Fig. 4b.
    """
    dev = resolve(device)
    g = torch.Generator().manual_seed(seed)
    m = _spectrum(m, "m")
    sigma = checks.number("sigma", sigma, 0)
    x, y = spectral_dataset(l, m.numel(), n, eps, sigma, generator=g)
    model = LinearPooling(m, S, sigma_theta, sigma_phi, generator=g).to(dev)
    x, y = x.to(dev), y.to(dev)
    params = list(model.parameters())
    losses = torch.empty(steps)
    for step in range(steps):  # plain gradient descent (torch.optim's first step imports torch._dynamo: slow)
        loss = ((y - model(x)[:, 0]) ** 2).mean()
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g_ in zip(params, grads):
                p -= lr * g_
        losses[step] = loss.detach().cpu()
    return losses


def loss_curves(ls: Sequence[int], m: torch.Tensor | np.ndarray, S: int, seeds: Sequence[int] = (0,),
                progress: bool = True, **kwargs: Any) -> torch.Tensor:
    """Training-loss curves (len(ls), len(seeds), steps) of `train_linear_pooling` for every l and seed."""
    cells = [(l, s) for l in ls for s in seeds]
    curves = [train_linear_pooling(l, m, S, seed=s, **kwargs)
              for l, s in tqdm(cells, disable=not progress, desc="linear model")]
    return torch.stack(curves).reshape(len(ls), len(seeds), -1)


# ----------------------------------------------------------------------------- Lemma 1

def expected_hessian(m: torch.Tensor | np.ndarray, l: int, S: int, eps: float, sigma: float,
                     sigma_theta: float = 1.0) -> torch.Tensor:
    """E grad^2_phi J for J = (y - f(x))^2 (Lemma 1), with A normalised by 1/sqrt(S) as in Eq. 1.

    (2 sigma_theta^2 / S) (eps^2 m[l]^2 diag(e_l) + sigma^2 diag(m^2)). The paper's statement lacks
    the 1/S, i.e. it holds for an unnormalised A = [I ... I]; zeta(l) does not depend on it.
    """
    m2 = _spectrum(m, "m").abs() ** 2
    check_factor(m2.numel(), S)
    checks.integer("l", l, 0, m2.numel() - 1, accepted=f"a frequency in [0, D) = [0, {m2.numel()})")
    eps = checks.number("eps", eps, 0, inclusive=True)
    sigma, sigma_theta = checks.number("sigma", sigma, 0), checks.number("sigma_theta", sigma_theta, 0)
    diag = sigma**2 * m2
    diag[l] += eps**2 * m2[l]
    return torch.diag(2 * sigma_theta**2 / S * diag)


def monte_carlo_hessian(m: torch.Tensor | np.ndarray, l: int, S: int, eps: float, sigma: float, n: int = 20000,
                        draws: int = 10, sigma_theta: float = 1.0, sigma_phi: float = 1.0,
                        seed: int = 0) -> torch.Tensor:
    """Monte-Carlo E grad^2_phi J over random theta, phi, x, y, by an autograd Hessian of the model's loss.

    Each of `draws` random phi is shared by n / draws samples (theta, x, y); the Hessian of their
    mean loss is the average of their Hessians, so one autograd Hessian covers a whole chunk.
    """
    g = torch.Generator().manual_seed(seed)
    m = _spectrum(m, "m")
    D = m.numel()
    check_factor(D, S)
    checks.integer("n", n, 1)
    checks.integer("draws", draws, 1, n, accepted=f"an integer in [1, n = {n}] (samples share each draw of phi)")
    checks.allocation("n", n, 8.0 * n * D, "the float64 samples")
    model = LinearPooling(m, S).double()
    chunk = max(1, n // draws)
    total = torch.zeros(D, D, dtype=torch.float64)
    for _ in range(draws):
        theta = sigma_theta * torch.randn(chunk, model.theta.numel(), dtype=torch.float64, generator=g)
        phi = sigma_phi * torch.randn(D, dtype=torch.float64, generator=g)
        x, y = spectral_dataset(l, D, chunk, eps, sigma, generator=g)
        x, y = x.double(), y.double()

        def loss(phi_, theta=theta, x=x, y=y):
            return ((y - linear_pooling_output(theta, phi_, x, model.m, model.A)) ** 2).mean()

        total += torch.autograd.functional.hessian(loss, phi)
    return total / draws


def zeta(m: torch.Tensor | np.ndarray, eps: float, sigma: float) -> torch.Tensor:
    """zeta(l) = eps^2 m[l]^2 / (sigma^2 max m^2) for every l: signal over largest noise curvature."""
    m2 = _spectrum(m, "m").abs() ** 2
    return checks.number("eps", eps, 0) ** 2 * m2 / (checks.number("sigma", sigma, 0) ** 2 * m2.max())


def lemma1_check(D: int = 16, S: int = 4, l: int = 3, eps: float = 1.0, sigma: float = 0.5, n: int = 10000,
                 seed: int = 0) -> dict[str, torch.Tensor]:
    """Lemma 1 against a Monte-Carlo average Hessian: arrays `theory` and `monte_carlo` (D x D)."""
    checks.integer("n", n, 10, accepted="an integer >= 10 (samples, over the Monte-Carlo's 10 draws of phi)")
    m = prefilter("average", D, S).abs()
    return {"theory": expected_hessian(m, l, S, eps, sigma),
            "monte_carlo": monte_carlo_hessian(m, l, S, eps, sigma, n, seed=seed)}
