"""Pooling as an anisotropic channel: aliasing, gamma(l), Theorem 1 and Lemma 1 (Sec. 2.1-2.2).

Conventions. Signals live in R^D; `x_hat = fft(x, norm="ortho")` (unitary DFT). A linear pooling
layer of factor S is a circular convolution with a prefilter followed by keeping every S-th
sample; its spectral response `m_hat` satisfies `fft(conv(x)) = m_hat * x_hat`, and the spectrum
of the output is `z_hat = A (m_hat * x_hat)` with `A = [I_M ... I_M] / sqrt(S)`, M = D / S (Eq. 1).
`torch.nn.functional.avg_pool1d(x, S)` is exactly this with `prefilter("average", D, S)`.

Data follow the book's D(v): `x = s (eps / 2) v + P_perp(sigma n)`, classes eps apart.
For a real Fourier direction v_l (sine or cosine at frequency l), the Bayes accuracy after
pooling is `Phi(eps gamma(l) / (2 sigma sqrt(S)))` with the paper's gamma of Eq. 2 (derivation in
`bayes_accuracy`). The paper prints `1 - Q(sqrt(2) eps gamma / (2 sigma))`, whose argument is
sqrt(2 S) times larger; it is offered as `convention="paper"`.

Theorem 1 in 2-D (the anti-aliasing chapter): `pool_2d` is a separable prefilter ("average" 2x2,
"binomial3", "binomial5") then stride S on both axes, as torch conv2d; `snr_gamma_2d` and
`bayes_accuracy_2d` give gamma and the Bayes accuracy for every 2-D Fourier direction (Eq. 2 with
the S^2 aliases of an output bin), checked against linear algebra and samples by
`direction_bayes_accuracy_2d` and `theorem1_check_2d`.
"""

import math
import numbers

import torch
from torch import nn
from tqdm import tqdm

from nadcore import data, fourier, seeds
from nadcore.device import resolve
from nadcore.models import binomial_filter

PREFILTERS = ("average", "gaussian", "ideal")
CONVENTIONS = ("exact", "paper")


# ----------------------------------------------------------------------------- checks

def check_factor(D, S):
    """Raise a ValueError unless S is an integer >= 1 that divides the integer D >= 1."""
    if not isinstance(D, numbers.Integral) or isinstance(D, bool) or D < 1:
        raise ValueError(f"D must be a positive integer; got {D!r}")
    if not isinstance(S, numbers.Integral) or isinstance(S, bool) or S < 1:
        raise ValueError(f"S must be an integer >= 1 (the subsampling factor); got {S!r}")
    if D % S:
        divisors = [s for s in range(1, D + 1) if D % s == 0]
        raise ValueError(f"S must divide D={D} (accepted: {divisors}); got S={S}")
    return D // S


def _positive(name, value):
    if not (isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
    return float(value)


def _spectrum(m_hat, name="m_hat"):
    m_hat = torch.as_tensor(m_hat)
    if m_hat.ndim != 1 or m_hat.numel() == 0:
        raise ValueError(f"{name} must be a 1-D spectral response of length D; got shape {tuple(m_hat.shape)}")
    return m_hat.to(torch.complex128 if m_hat.is_complex() else torch.float64)


# ----------------------------------------------------------------------------- Eq. 1

def aliasing_matrix(D, S, dtype=torch.float64):
    """The M x D aliasing matrix A = [I_M ... I_M] / sqrt(S) of Eq. 1 (M = D / S)."""
    M = check_factor(D, S)
    return torch.eye(M, dtype=dtype).repeat(1, S) / math.sqrt(S)


def pool_spectrum(x_hat, m_hat, S):
    """Spectrum of the pooled signal, z_hat = A (m_hat * x_hat) (Eq. 1), over the last axis."""
    m_hat = _spectrum(m_hat)
    D = m_hat.numel()
    M = check_factor(D, S)
    x_hat = torch.as_tensor(x_hat)
    if x_hat.shape[-1] != D:
        raise ValueError(f"x_hat must have D={D} entries on its last axis; got shape {tuple(x_hat.shape)}")
    y = (m_hat.to(x_hat.device) * x_hat).reshape(*x_hat.shape[:-1], S, M)
    return y.sum(-2) / math.sqrt(S)


def pool(x, m_hat, S):
    """Pool real signals x (..., D): circular convolution by the prefilter, then keep every S-th sample."""
    m_hat = _spectrum(m_hat)
    check_factor(m_hat.numel(), S)
    x = torch.as_tensor(x)
    y = torch.fft.ifft(torch.fft.fft(x.to(torch.float64)) * m_hat.to(x.device))
    return y.real[..., ::S].to(x.dtype if x.is_floating_point() else torch.float64)


# ----------------------------------------------------------------------------- prefilters

def prefilter(kind, D, S, width=None):
    """Spectral response m_hat (length D) of a pooling prefilter.

    kind: "average" (the box of avg_pool1d, complex because the window is one-sided),
    "gaussian" (a circular Gaussian kernel of spatial std `width`, default S / 2),
    "ideal" (low-pass keeping |f| < M/2, half power at |f| = M/2 so that it stays real),
    or an array of D values: any spectral response you like.
    """
    M = check_factor(D, S)
    if not isinstance(kind, str):
        m_hat = _spectrum(kind, "prefilter")
        if m_hat.numel() != D:
            raise ValueError(f"a user prefilter must have D={D} spectral values; got {m_hat.numel()}")
        return m_hat
    f = torch.fft.fftfreq(D, d=1.0 / D, dtype=torch.float64).abs()
    if kind == "average":
        h = torch.zeros(D, dtype=torch.float64)
        h[(-torch.arange(S)) % D] = 1.0 / S  # y[n] = mean(x[n], ..., x[n + S - 1])
        return torch.fft.fft(h)
    if kind == "gaussian":
        w = _positive("width", S / 2 if width is None else width)
        t = torch.arange(D, dtype=torch.float64)
        t = torch.minimum(t, D - t)
        h = torch.exp(-0.5 * (t / w) ** 2)
        return torch.fft.fft(h / h.sum()).real.to(torch.float64)
    if kind == "ideal":
        m = (f < M / 2).to(torch.float64)
        m[f == M / 2] = math.sqrt(0.5)
        return m
    raise ValueError(f"kind must be one of {', '.join(PREFILTERS)} or an array of D spectral values; got {kind!r}")


# ----------------------------------------------------------------------------- Theorem 1

def snr_gamma(m_hat, S):
    """gamma(l) for every l (Eq. 2): gamma^2 = S |m[l]|^2 / sum_{k=1}^{S-1} |m[l + kM]|^2.

    gamma is +inf where the aliases of l are filtered out (no noise reaches the output bin of l)
    and 0 where m[l] = 0.
    """
    m2 = _spectrum(m_hat).abs() ** 2
    D = m2.numel()
    M = check_factor(D, S)
    rolled = torch.stack([m2.roll(-k * M) for k in range(1, S)]) if S > 1 else m2.new_zeros(1, D)
    noise = rolled.sum(0)
    gamma2 = torch.where(m2 > 0, S * m2 / noise, torch.zeros_like(m2))
    return gamma2.sqrt()


def bayes_accuracy(m_hat, S, eps, sigma, convention="exact"):
    """Best achievable accuracy after pooling on D(v_l), for every l (Theorem 1).

    "exact" (default): Phi(eps gamma / (2 sigma sqrt(S))) for the book's D(v) (classes eps apart,
    noise projected off v). Derivation: the pooled data are Gaussian with means +-(eps/2) Pv and
    covariance sigma^2 P (I - vv^T) P^T; by Sherman-Morrison the Mahalanobis distance between the
    classes is eps / sigma * sqrt(q / (1 - q)) with q = |m[l]|^2 / sum_k |m[l + kM]|^2, and
    q / (1 - q) = gamma^2 / S. This holds for a real sine/cosine v_l whenever l and -l do not alias
    onto one output bin (2 l != 0 mod M); `direction_bayes_accuracy` covers every v.
    "paper": 1 - Q(sqrt(2) eps gamma / (2 sigma)), the formula as printed in Theorem 1.
    The printed argument is sqrt(2 S) times the exact one on the book's data, and sqrt(S / 2) times
    it in the paper's own convention x = eps y v + w (classes 2 eps apart), whose exact accuracy is
    `bayes_accuracy(m_hat, S, 2 * eps, sigma)` = Phi(eps gamma / (sigma sqrt(S))).
    """
    eps = _positive("eps", eps)
    sigma = _positive("sigma", sigma)
    gamma = snr_gamma(m_hat, S)
    if convention == "exact":
        arg = eps * gamma / (2 * sigma * math.sqrt(S))
    elif convention == "paper":
        arg = math.sqrt(2) * eps * gamma / (2 * sigma)
    else:
        raise ValueError(f"convention must be one of {', '.join(CONVENTIONS)}; got {convention!r}")
    return torch.special.ndtr(arg)


def pooling_matrix(m_hat, S):
    """The real M x D matrix P of the pooling layer (prefilter, then every S-th sample)."""
    m_hat = _spectrum(m_hat)
    return pool(torch.eye(m_hat.numel(), dtype=torch.float64), m_hat, S).T.contiguous()


def direction_bayes_accuracy(v, m_hat, S, eps, sigma):
    """Bayes accuracy after pooling for any unit direction v (closed form, by linear algebra).

    With u = P v and Sigma_0 = P P^T, q = u^T Sigma_0^+ u and the accuracy is
    Phi(eps / (2 sigma) sqrt(q / (1 - q))) (1 when q = 1: the classes separate perfectly).
    """
    eps = _positive("eps", eps)
    sigma = _positive("sigma", sigma)
    P = pooling_matrix(m_hat, S)
    v = torch.as_tensor(v, dtype=torch.float64).flatten()
    if v.numel() != P.shape[1]:
        raise ValueError(f"v must have D={P.shape[1]} entries; got {v.numel()}")
    v = v / v.norm()
    u = P @ v
    q = float(u @ torch.linalg.pinv(P @ P.T, hermitian=True) @ u)
    if q >= 1 - 1e-12:
        return 1.0
    return float(torch.special.ndtr(torch.tensor(eps / (2 * sigma) * math.sqrt(q / (1 - q)), dtype=torch.float64)))


def fourier_direction_1d(l, D, kind="sin"):
    """The real unit vector of frequency l in R^D: a sine ("sin") or cosine ("cos") pattern."""
    if kind not in ("sin", "cos"):
        raise ValueError(f"kind must be 'sin' or 'cos'; got {kind!r}")
    t = torch.arange(D, dtype=torch.float64)
    v = (torch.sin if kind == "sin" else torch.cos)(2 * math.pi * l * t / D)
    if v.norm() < 1e-9:
        raise ValueError(f"the {kind} pattern of frequency l={l} is zero for D={D}; use kind='cos'")
    return v / v.norm()


def simulated_accuracy(l, D=128, S=4, eps=1.0, sigma=1.0, n_train=20000, n_test=20000, seed=0,
                       kind="sin", prefilter_kind="average"):
    """Test accuracy of the optimal (LDA) classifier fitted on D(v_l) samples after pooling.

    With the "average" prefilter the samples go through `torch.nn.functional.avg_pool1d(x, S)`,
    otherwise through `pool`. LDA is the Bayes rule for two Gaussians with a shared covariance,
    fitted here from `n_train` pooled samples and scored on `n_test` fresh ones (both drawn by
    `data.directional_dataset`, from the seeds `seeds.derive(seed, TRAIN)` and `(seed, TEST)`).
    """
    check_factor(D, S)
    eps, sigma = _positive("eps", eps), _positive("sigma", sigma)
    v = fourier_direction_1d(l, D, kind).reshape(1, D)   # `data.directional_dataset` reads it as a 1 x D image
    (x, yt), (xs, ys) = (data.directional_dataset(v, n, sigma, eps, seed=seeds.derive(seed, role))
                         for role, n in ((seeds.TRAIN, n_train), (seeds.TEST, n_test)))
    if isinstance(prefilter_kind, str) and prefilter_kind == "average":
        zt, zs = (nn.functional.avg_pool1d(a.reshape(len(a), 1, D), S).squeeze(1).double() for a in (x, xs))
    else:
        m = prefilter(prefilter_kind, D, S)
        zt, zs = (pool(a.reshape(len(a), D).double(), m, S) for a in (x, xs))
    mu0, mu1 = zt[yt == 0].mean(0), zt[yt == 1].mean(0)
    centred = torch.cat([zt[yt == 0] - mu0, zt[yt == 1] - mu1])
    cov = centred.T @ centred / (n_train - 2)
    w = torch.linalg.pinv(cov, hermitian=True) @ (mu1 - mu0)
    pred = ((zs - (mu0 + mu1) / 2) @ w > 0).long()
    return float((pred == ys).double().mean())


# ----------------------------------------------------------------------------- Sec. 2.2: the linear model

class LinearPooling(nn.Module):
    """The deep linear model of pooling f(x) = theta^T A (m * phi * x) of Sec. 2.2.

    x holds D spectral coefficients (any trailing shape with D entries, e.g. 1x32x32 for D=1024);
    the output has shape (N, 1). theta ~ N(0, sigma_theta^2 I_M), phi ~ N(0, sigma_phi^2 I_D).
    By Eq. 4 its NADs are the canonical basis vectors ordered by decreasing m^2.
    """
    def __init__(self, m, S, sigma_theta=1.0, sigma_phi=1.0, generator=None):
        super().__init__()
        m = _spectrum(m, "m").abs().to(torch.float32)
        D = m.numel()
        M = check_factor(D, S)
        self.S = S
        self.register_buffer("m", m)
        self.register_buffer("A", aliasing_matrix(D, S, dtype=torch.float32))
        self.theta = nn.Parameter(_positive("sigma_theta", sigma_theta) * torch.randn(M, generator=generator))
        self.phi = nn.Parameter(_positive("sigma_phi", sigma_phi) * torch.randn(D, generator=generator))

    def forward(self, x):
        return linear_pooling_output(self.theta, self.phi, x.reshape(x.shape[0], -1), self.m, self.A)[:, None]


def linear_pooling_output(theta, phi, x, m, A):
    """f(x) = theta^T A (m * phi * x) for a batch x (N, D); theta may be (M,) or one per sample (N, M)."""
    return (((m * phi * x) @ A.T) * theta).sum(-1)


def linear_pooling_model(m=None, S=4, D=128, sigma_theta=1.0, sigma_phi=1.0, seed=None):
    """A freshly initialised `LinearPooling` (m defaults to |average prefilter|); `seed` fixes theta, phi."""
    m = prefilter("average", D, S) if m is None else m
    g = None if seed is None else torch.Generator().manual_seed(seed)
    return LinearPooling(m, S, sigma_theta, sigma_phi, generator=g)


def spectral_dataset(l, D, n, eps, sigma, generator=None):
    """The data of Sec. 2.2: x = eps y e_l + w, w ~ N(0, sigma^2 I_D), y = +-1 (half each)."""
    if not 0 <= l < D:
        raise ValueError(f"l must be in [0, D={D}); got {l}")
    y = 1.0 - 2.0 * (torch.arange(n) % 2).float()
    x = sigma * torch.randn(n, D, generator=generator)
    x[:, l] += eps * y
    return x, y


def train_linear_pooling(l, m, S, eps=1.0, sigma=1.0, n=1000, steps=300, lr=0.05, sigma_theta=1.0,
                         sigma_phi=1.0, seed=0, device="cpu"):
    """Train the linear model with the quadratic loss (y - f(x))^2 by full-batch gradient descent.

    Returns the training loss at every step (length `steps`), as in Fig. 4b.
    """
    dev = resolve(device)
    g = torch.Generator().manual_seed(seed)
    m = _spectrum(m, "m")
    sigma = _positive("sigma", sigma)
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


def loss_curves(ls, m, S, seeds=(0,), progress=True, **kwargs):
    """Training-loss curves (len(ls), len(seeds), steps) of `train_linear_pooling` for every l and seed."""
    cells = [(l, s) for l in ls for s in seeds]
    curves = [train_linear_pooling(l, m, S, seed=s, **kwargs)
              for l, s in tqdm(cells, disable=not progress, desc="linear model")]
    return torch.stack(curves).reshape(len(ls), len(seeds), -1)


# ----------------------------------------------------------------------------- Lemma 1

def expected_hessian(m, l, S, eps, sigma, sigma_theta=1.0):
    """E grad^2_phi J for J = (y - f(x))^2 (Lemma 1), with A normalised by 1/sqrt(S) as in Eq. 1.

    (2 sigma_theta^2 / S) (eps^2 m[l]^2 diag(e_l) + sigma^2 diag(m^2)). The paper's statement lacks
    the 1/S, i.e. it holds for an unnormalised A = [I ... I]; zeta(l) does not depend on it.
    """
    m2 = _spectrum(m, "m").abs() ** 2
    check_factor(m2.numel(), S)
    sigma, sigma_theta = _positive("sigma", sigma), _positive("sigma_theta", sigma_theta)
    diag = sigma**2 * m2
    diag[l] += eps**2 * m2[l]
    return torch.diag(2 * sigma_theta**2 / S * diag)


def monte_carlo_hessian(m, l, S, eps, sigma, n=20000, draws=10, sigma_theta=1.0, sigma_phi=1.0, seed=0):
    """Monte-Carlo E grad^2_phi J over random theta, phi, x, y, by an autograd Hessian of the model's loss.

    Each of `draws` random phi is shared by n / draws samples (theta, x, y); the Hessian of their
    mean loss is the average of their Hessians, so one autograd Hessian covers a whole chunk.
    """
    g = torch.Generator().manual_seed(seed)
    m = _spectrum(m, "m")
    D = m.numel()
    check_factor(D, S)
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


def zeta(m, eps, sigma):
    """zeta(l) = eps^2 m[l]^2 / (sigma^2 max m^2) for every l: signal over largest noise curvature."""
    m2 = _spectrum(m, "m").abs() ** 2
    return _positive("eps", eps) ** 2 * m2 / (_positive("sigma", sigma) ** 2 * m2.max())


# ----------------------------------------------------------------------------- theory vs simulation

def theorem1_check(D=64, S=4, eps=1.0, sigma=1.0, ls=(1, 3, 5, 7), n_train=10000, n_test=20000, seed=0,
                   progress=True):
    """Theorem 1 against avg_pool1d simulations, for sine directions v_l.

    Returns arrays `l`, `theory` (Eq. 2, exact convention), `paper` (the printed formula),
    `direction` (closed form by linear algebra for the real v_l), `simulated` and `stderr`
    (binomial standard error of `simulated`).
    """
    m_hat = prefilter("average", D, S)
    exact, paper = bayes_accuracy(m_hat, S, eps, sigma), bayes_accuracy(m_hat, S, eps, sigma, "paper")
    ls = torch.as_tensor(list(ls))
    sim = torch.tensor([simulated_accuracy(int(l), D, S, eps, sigma, n_train, n_test, seeds.derive(seed, l))
                        for l in tqdm(ls.tolist(), disable=not progress, desc="Theorem 1")],
                       dtype=torch.float64)
    direction = torch.tensor([direction_bayes_accuracy(fourier_direction_1d(int(l), D), m_hat, S, eps, sigma)
                              for l in ls], dtype=torch.float64)
    return {"l": ls, "theory": exact[ls], "paper": paper[ls], "direction": direction, "simulated": sim,
            "stderr": (sim * (1 - sim) / n_test).sqrt()}


def lemma1_check(D=16, S=4, l=3, eps=1.0, sigma=0.5, n=10000, seed=0):
    """Lemma 1 against a Monte-Carlo average Hessian: arrays `theory` and `monte_carlo` (D x D)."""
    m = prefilter("average", D, S).abs()
    return {"theory": expected_hessian(m, l, S, eps, sigma),
            "monte_carlo": monte_carlo_hessian(m, l, S, eps, sigma, n, seed=seed)}


# ----------------------------------------------------------------------------- Theorem 1 in 2-D

PREFILTERS_2D = ("average", "binomial3", "binomial5")
CASCADES_2D = tuple(f"{k}_x2" for k in PREFILTERS_2D)  # two poolings of factor 2 in a row: one of factor 4
MODEL_NAMES_2D = {"avg": "average", "blur3": "binomial3", "blur5": "binomial5"}  # models.LENET_POOLINGS spelling
PADDINGS_2D = ("circular", "reflect", "zeros")


def _kind_2d(kind):
    kind = MODEL_NAMES_2D.get(kind, kind) if isinstance(kind, str) else kind
    if kind not in PREFILTERS_2D + CASCADES_2D:
        raise ValueError(f"kind must be one of {', '.join(PREFILTERS_2D + CASCADES_2D)} (or avg, blur3, blur5); "
                         f"got {kind!r}")
    return kind


def prefilter_taps(kind, S=2):
    """The 1-D taps of a separable 2-D prefilter and how many come before the output sample:
    output n of the 1-D filter is `sum_j taps[j] x[n - before + j]` (float64).

    "average": S taps 1/S, before = 0 (the window of `avg_pool2d(x, S)`, one-sided).
    "binomial3", "binomial5": `models.binomial_filter` ([1, 2, 1] / 4, [1, 4, 6, 4, 1] / 16),
    centred, before = 1 and 2 (the blur of `models.BlurPool2d`). The model names "avg", "blur3"
    and "blur5" are accepted too.
    "average_x2", "binomial3_x2", "binomial5_x2" (S must be 4): that pooling with factor 2 applied
    twice, as one pooling of factor 4 (LeNet's two pooling layers without the layers between):
    with taps t and b before, output k is sum_{i, j} t[i] t[j] x[4k - 3b + i + 2j], so the taps are
    c[q] = sum_{i + 2j = q} t[i] t[j] and 3b come before.
    """
    kind = _kind_2d(kind)
    if isinstance(S, bool) or not isinstance(S, numbers.Integral) or S < 1:
        raise ValueError(f"S must be an integer >= 1 (the subsampling factor); got {S!r}")
    if kind in CASCADES_2D:
        if S != 4:
            raise ValueError(f"S must be 4 for {kind} (two poolings of factor 2); got {S}")
        t, b = prefilter_taps(kind[:-3], 2)
        c = torch.zeros(3 * (len(t) - 1) + 1, dtype=torch.float64)
        for j, tj in enumerate(t.tolist()):
            c[2 * j:2 * j + len(t)] += tj * t
        return c, 3 * b
    if kind == "average":
        return torch.full((S,), 1.0 / S, dtype=torch.float64), 0
    size = int(kind[-1])
    return binomial_filter(size, torch.float64), (size - 1) // 2


def prefilter_1d(kind, size=32, S=2):
    """Spectral response (length `size`) of the 1-D taps of `prefilter_taps`, in this module's
    convention `fft(conv(x)) = m_hat * x_hat` (circular). `prefilter_1d("average", D, S)` equals
    `prefilter("average", D, S)`; the binomials are real, cos(pi f / size)^(2, 4)."""
    check_factor(size, S)
    taps, before = prefilter_taps(kind, S)
    h = torch.zeros(size, dtype=torch.float64)
    for j, t in enumerate(taps.tolist()):
        h[(before - j) % size] += t
    return torch.fft.fft(h)


def prefilter_2d(kind, size=32, S=2):
    """The separable 2-D spectral response m_hat[ky, kx] = m[ky] m[kx] (rows ky, columns kx, the
    layout of `torch.fft.fft2` of an image), with m = `prefilter_1d(kind, size, S)`."""
    m = prefilter_1d(kind, size, S)
    return torch.outer(m, m)


def pool_2d(x, kind, S=2, padding="circular"):
    """The 2-D linear pooling layer: every channel of `x` (..., H, W) filtered by the separable
    prefilter (torch `conv2d` with the outer product of `prefilter_taps`) with stride S on both
    axes, after padding `before` pixels ahead and len(taps) - 1 - before behind on each axis.

    `padding` "circular" is the circular convolution the theory assumes (Eq. 1 in 2-D); "reflect"
    is what `models.BlurPool2d` does; "zeros" is zero padding. The average never reaches its
    padding: there all three equal `avg_pool2d(x, S)`. The output has (H / S) x (W / S) pixels.
    """
    if padding not in PADDINGS_2D:
        raise ValueError(f"padding must be one of {', '.join(PADDINGS_2D)}; got {padding!r}")
    x = torch.as_tensor(x)
    if x.dim() < 2:
        raise ValueError(f"x must have shape (..., H, W); got {tuple(x.shape)}")
    H, W = x.shape[-2:]
    check_factor(int(H), S)
    check_factor(int(W), S)
    taps, before = prefilter_taps(kind, S)
    after = len(taps) - 1 - before
    flat = x.reshape(-1, 1, H, W)
    kernel = torch.outer(taps, taps).to(flat.dtype if flat.is_floating_point() else torch.float64)
    flat = flat.to(kernel.dtype)
    mode = {"circular": "circular", "reflect": "reflect", "zeros": "constant"}[padding]
    flat = nn.functional.pad(flat, (before, after, before, after), mode=mode)
    out = nn.functional.conv2d(flat, kernel[None, None], stride=S)
    return out.reshape(*x.shape[:-2], H // S, W // S)


def pooling_matrix_2d(kind, S=2, size=32, padding="circular"):
    """The real (size/S)^2 x size^2 matrix P of `pool_2d` on size x size images (float64)."""
    eye = torch.eye(size * size, dtype=torch.float64).reshape(-1, size, size)
    return pool_2d(eye, kind, S, padding).reshape(size * size, -1).T.contiguous()


def _cells_2d(grid, size):
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 2:
        raise ValueError(f"size must be an int >= 2; got {size!r}")
    grid = fourier.full_grid(size) if grid is None else grid
    if isinstance(grid, fourier.Grid):
        if grid.size != size:
            raise ValueError(f"grid.size must equal size={size}; got {grid.size}")
        return grid.cells()
    cells = [tuple(c) for c in grid]
    lo, hi = -(size // 2), (size + 1) // 2 - 1
    for c in cells:
        whole = all(isinstance(k, numbers.Integral) and not isinstance(k, bool) for k in c)
        if len(c) != 2 or not whole or not all(lo <= k <= hi for k in c):
            raise ValueError(f"grid must be a fourier.Grid or (kx, ky) pairs of ints in [{lo}, {hi}] (the fftshift "
                             f"range of a {size}x{size} image); got {c!r}")
    return cells


def directions_2d(cells, size=32, kind="sin"):
    """The unit directions of `fourier.fourier_direction(kx, ky, size, kind)` for all `cells` at once,
    in float64, shape (len(cells), size, size): -sin(2 pi (kx n + ky m) / size) (or the cosine) over
    pixels (row m, column n), normalised; the cosine at self-conjugate frequencies, as
    `fourier.Grid.directions` (where the sine vanishes). Built from that formula rather than by
    1024 calls of `fourier_direction` (float32, and slow on a busy CPU); the tests check they agree.
    """
    if kind not in fourier.KINDS:
        raise ValueError(f"kind must be one of {', '.join(fourier.KINDS)}; got {kind!r}")
    cells = _cells_2d(cells, size)
    k = torch.tensor(cells, dtype=torch.float64).reshape(-1, 2)
    t = torch.arange(size, dtype=torch.float64)
    phase = 2 * math.pi * (k[:, 0, None, None] * t[None, None, :] + k[:, 1, None, None] * t[None, :, None]) / size
    cosine = torch.tensor([kind == "cos" or fourier.is_self_conjugate(kx, ky, size) for kx, ky in cells])
    v = torch.where(cosine[:, None, None], torch.cos(phase), -torch.sin(phase))
    return v / v.flatten(1).norm(dim=1)[:, None, None]


def pooled_fraction_2d(kind, S=2, size=32, grid=None, direction="sin"):
    """q(kx, ky) = u^T (P P^T)^+ u with u = P v, for the direction v at each (kx, ky) of `grid`
    (default: `fourier.full_grid(size)`; or any list of (kx, ky)): the share of the direction that
    stays distinguishable from the noise after pooling. Returns `{(kx, ky): q}`.

    Closed form (circular pooling, unitary DFTs): P is the 2-D convolution by m_hat then keeping
    every S-th row and column, so the output bin t = (ty, tx) of the pooled spectrum is
    z_hat[t] = (1 / S) sum_{a, b < S} m_hat[ty + a M, tx + b M] x_hat[ty + a M, tx + b M] with
    M = size / S (Eq. 1 on each axis: A (x) A), and P P^T is diagonal in that basis. Hence
        q = sum_t |sum_{j ~ t} m_hat[j] v_hat[j]|^2 / sum_{j ~ t} |m_hat[j]|^2,
    j ~ t running over the S^2 aliases of t. `v` is `fourier.fourier_direction(kx, ky, size,
    direction)`, the cosine at self-conjugate frequencies (as `fourier.Grid.directions`), built in
    float64 by `directions_2d`.
    """
    cells, q, _ = _signal_noise_2d(kind, S, size, grid, direction)
    return {c: float(qc) for c, qc in zip(cells, q)}


def _signal_noise_2d(kind, S, size, grid, direction):
    """The cells, q and 1 - q of `pooled_fraction_2d`; 1 - q summed without cancellation, by
    Lagrange's identity per output bin: w |v|^2 - |sum m v|^2 = sum_{j < l} |m_j v_l - m_l v_j|^2
    (w = sum |m_j|^2), so that gamma stays exact where q is within 1e-8 of 1."""
    M = check_factor(size, S)
    cells = _cells_2d(grid, size)
    m = prefilter_2d(kind, size, S).reshape(S, M, S, M).permute(0, 2, 1, 3).reshape(S * S, M, M)
    v_hat = torch.fft.fft2(directions_2d(cells, size, direction), norm="ortho")
    v_hat = v_hat.reshape(-1, S, M, S, M).permute(0, 1, 3, 2, 4).reshape(-1, S * S, M, M)  # (N, aliases, ty, tx)
    z = (m * v_hat).sum(1)
    w = (m.abs() ** 2).sum(0)
    cross = (m[None, :, None] * v_hat[:, None, :] - m[None, None, :] * v_hat[:, :, None]).abs() ** 2
    lost = cross.sum((1, 2)) / 2  # sum over ordered pairs, halved
    safe = torch.where(w > 0, w, 1.0)
    q = torch.where(w > 0, z.abs() ** 2 / safe, 0.0).sum((1, 2))
    r = torch.where(w > 0, lost / safe, (v_hat.abs() ** 2).sum(1)).sum((1, 2))
    return cells, q.clamp(0.0, 1.0), r.clamp(0.0, 1.0)


def snr_gamma_2d(kind, S=2, size=32, grid=None, direction="sin"):
    """gamma(kx, ky) of Theorem 1 for 2-D linear pooling (separable prefilter `kind`, stride S on
    both axes, size x size images), for the direction of each (kx, ky) of `grid`.

    Returns `{(kx, ky): gamma}` (default grid `fourier.full_grid(size)`: every frequency);
    `grid.image(gamma)` lays it out as an array. gamma^2 = S^2 q / (1 - q) with q of
    `pooled_fraction_2d` (+inf where q = 1, 0 where q < 1e-20, float rounding of an exact null), so
    that, as in 1-D (`bayes_accuracy`), the Bayes accuracy on the pooled D(v) is
    Phi(eps gamma / (2 sigma sqrt(S^2))).

    It is Eq. 2 with the S^2 aliases of a 2-D output bin in place of the S of 1-D:
        gamma^2(k) = S^2 |m_hat[k]|^2 / sum_{(a, b) != (0, 0)} |m_hat[ky + a M, kx + b M]|^2,
    m_hat[ky, kx] = m[ky] m[kx], M = size / S (2-D pooling is 1-D pooling of the size^2 pixels by
    the factor S^2 once the aliases of each output bin are lined up). This holds for the complex
    exponential at k and for the real sine/cosine whenever k and -k do not alias onto one output
    bin; where they do (2k = 0 mod M but not mod size, e.g. (8, 0) for S = 2 on 32x32) the two
    conjugate components add coherently and q depends on the phase: a sine there is zeroed by
    the centred (real) binomial filters, its samples landing on the sine's zeros.
    """
    cells, q, r = _signal_noise_2d(kind, S, size, grid, direction)
    gamma = S * (q / r).sqrt()  # q / 0 = inf: nothing of the noise reaches the direction's output bins
    return {c: float(g) if qc > 1e-20 else 0.0 for c, g, qc in zip(cells, gamma, q)}  # below: rounding of a null


def bayes_accuracy_2d(kind, eps, sigma, S=2, size=32, grid=None, direction="sin", convention="exact"):
    """Best achievable accuracy on pooled D(v) for each direction of `grid` (`{(kx, ky): acc}`).

    "exact": Phi(eps gamma / (2 sigma S)) = Phi(eps / (2 sigma) sqrt(q / (1 - q))) for the book's
    D(v) (derivation as in `bayes_accuracy`, with `pooled_fraction_2d`'s q).
    "paper": 1 - Q(sqrt(2) eps gamma / (2 sigma)), the printed formula with the 2-D gamma.
    """
    eps, sigma = _positive("eps", eps), _positive("sigma", sigma)
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {', '.join(CONVENTIONS)}; got {convention!r}")
    gamma = snr_gamma_2d(kind, S, size, grid, direction)
    scale = eps / (2 * sigma * S) if convention == "exact" else math.sqrt(2) * eps / (2 * sigma)
    return {c: float(torch.special.ndtr(torch.tensor(scale * g, dtype=torch.float64))) for c, g in gamma.items()}


def direction_bayes_accuracy_2d(vs, kind, eps, sigma, S=2, padding="circular"):
    """Bayes accuracy after `pool_2d` for each unit direction of `vs` (N, 1, size, size) or (N, size,
    size), by linear algebra on `pooling_matrix_2d` (any padding): Phi(eps / (2 sigma) sqrt(q / (1 - q)))
    with q = u^T (P P^T)^+ u, u = P v (P P^T is invertible for the three prefilters). A tensor (N,)."""
    eps, sigma = _positive("eps", eps), _positive("sigma", sigma)
    vs = torch.as_tensor(vs, dtype=torch.float64)
    size = vs.shape[-1]
    P = pooling_matrix_2d(kind, S, size, padding)
    vs = vs.reshape(len(vs), -1)
    if vs.shape[1] != P.shape[1]:
        raise ValueError(f"vs must hold size x size images (size^2 = {P.shape[1]}); got shape {tuple(vs.shape)}")
    u = (vs / vs.norm(dim=1, keepdim=True)) @ P.T
    gram = P @ P.T
    try:
        solved = torch.linalg.solve(gram, u.T).T
    except RuntimeError:  # singular: a prefilter that nulls some output bin entirely
        solved = u @ torch.linalg.pinv(gram, hermitian=True)
    q = (solved * u).sum(1).clamp(0.0, 1.0)
    arg = eps / (2 * sigma) * torch.sqrt(q / (1 - q).clamp_min(1e-300))
    return torch.where(q >= 1 - 1e-12, torch.ones_like(q), torch.special.ndtr(arg))


SIM_METHODS = ("lda", "snr")


def _class_statistics(z, y):
    """Class means and the pooled within-class covariance (n - 2 degrees of freedom), float64."""
    z0, z1 = z[y == 0], z[y == 1]
    mu0, mu1 = z0.mean(0), z1.mean(0)
    scatter = z.T @ z - len(z0) * torch.outer(mu0, mu0) - len(z1) * torch.outer(mu1, mu1)
    return mu0, mu1, scatter / (len(z) - 2)


def _lda_test_accuracy(zt, yt, zs, ys):
    """Test accuracy of LDA (the Bayes rule for two Gaussians with a shared covariance) fitted on (zt, yt)."""
    mu0, mu1, cov = _class_statistics(zt, yt)
    w = torch.linalg.solve(cov, mu0 - mu1)  # label 0 is the +eps/2 class
    pred = ((zs - (mu0 + mu1) / 2) @ w < 0).long()
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


def simulated_accuracy_2d(kx, ky, kind, S=2, eps=1.0, sigma=1.0, n_train=10000, n_test=20000, seed=0,
                          size=32, direction="sin", padding="circular", method="lda"):
    """The accuracy reached on samples of D(v) pooled by `pool_2d` (torch conv2d, stride S),
    v = `fourier.fourier_direction(kx, ky)` (the cosine at self-conjugate frequencies).

    The samples are `data.directional_dataset(v, n, sigma, eps)` (training and test sets from
    the seeds `seeds.derive(seed, TRAIN)` and `(seed, TEST)`), pooled in float32, then analysed in float64 over the
    (size / S)^2 pooled pixels. `method` "lda": test accuracy on `n_test` samples of LDA fitted on
    `n_train` (it falls short of the Bayes accuracy by about 0.01 at n_train = 10000 in 256
    dimensions: the fitted covariance is noisy). "snr": Phi(Delta / 2) with the pooled classes'
    Mahalanobis distance Delta estimated without bias from the `n_train` samples (Lachenbruch's
    correction; `n_test` unused): the Bayes accuracy itself, estimated from samples.
    """
    if method not in SIM_METHODS:
        raise ValueError(f"method must be one of {', '.join(SIM_METHODS)}; got {method!r}")
    eps, sigma = _positive("eps", eps), _positive("sigma", sigma)
    _cells_2d([(kx, ky)], size)
    if direction not in fourier.KINDS:
        raise ValueError(f"kind must be one of {', '.join(fourier.KINDS)}; got {direction!r}")
    v = fourier.fourier_direction(kx, ky, size, "cos" if fourier.is_self_conjugate(kx, ky, size) else direction)
    sets = ((seeds.TRAIN, n_train),) if method == "snr" else ((seeds.TRAIN, n_train), (seeds.TEST, n_test))
    pooled = []
    for role, n in sets:
        x, y = data.directional_dataset(v, n, sigma, eps, seed=seeds.derive(seed, role))
        pooled.append((pool_2d(x[:, 0], kind, S, padding).flatten(1).double(), y))
    if method == "snr":
        return _snr_accuracy(*pooled[0])
    return _lda_test_accuracy(*pooled[0], *pooled[1])


def theorem1_check_2d(kind, cells, S=2, eps=1.0, sigma=1.0, n_train=10000, n_test=20000, seed=0, size=32,
                      direction="sin", padding="circular", method="lda", progress=True):
    """Theorem 1 in 2-D against LDA on `pool_2d` outputs, for the directions at `cells` [(kx, ky), ...].

    Returns arrays `kx`, `ky`, `gamma` (`snr_gamma_2d`), `theory` (exact convention), `paper`
    (printed formula), `direction` (`direction_bayes_accuracy_2d` with `padding`), `simulated`
    (`simulated_accuracy_2d` with `method`) and `stderr`: for "lda" the binomial standard error of
    the test accuracy; for "snr" a delta-method approximation, phi(Delta / 2) / 2 times the
    standard deviation of the estimated Delta, from var(Delta^2) ~ 4 c Delta^2 + 2 c^2 p +
    Delta^4 / (2 (n - p)) with c = 4 / n_train and p the pooled dimension (Delta ~ Delta^2 near 0:
    there 0.45 sqrt of that variance).
    """
    cells = [tuple(int(k) for k in c) for c in cells]
    gamma = snr_gamma_2d(kind, S, size, cells, direction)
    exact = bayes_accuracy_2d(kind, eps, sigma, S, size, cells, direction)
    paper = bayes_accuracy_2d(kind, eps, sigma, S, size, cells, direction, convention="paper")
    vs = directions_2d(cells, size, direction)
    sim = torch.tensor([simulated_accuracy_2d(kx, ky, kind, S, eps, sigma, n_train, n_test,
                                              seeds.derive(seed, kx % size, ky % size), size, direction, padding,
                                              method)
                        for kx, ky in tqdm(cells, disable=not progress, desc=f"Theorem 1 2-D {kind}")],
                       dtype=torch.float64)
    as_array = lambda d: torch.tensor([d[c] for c in cells], dtype=torch.float64)
    return {"kx": torch.tensor([c[0] for c in cells]), "ky": torch.tensor([c[1] for c in cells]),
            "gamma": as_array(gamma), "theory": as_array(exact), "paper": as_array(paper),
            "direction": direction_bayes_accuracy_2d(vs, kind, eps, sigma, S, padding), "simulated": sim,
            "stderr": ((sim * (1 - sim) / n_test).sqrt() if method == "lda"
                       else _snr_stderr(sim, n_train, (size // S) ** 2))}


def _snr_stderr(acc, n, p):
    """Approximate standard error of `_snr_accuracy` at estimated accuracies `acc` (see `theorem1_check_2d`)."""
    delta = 2 * torch.special.ndtri(acc.clamp(0.5, 1 - 1e-12))
    c = 4.0 / n
    var = 4 * c * delta**2 + 2 * c**2 * p + delta**4 / (2 * (n - p))
    sd_delta = torch.where(delta**2 > var.sqrt(), var.sqrt() / (2 * delta.clamp_min(1e-12)), 0.45 * var.pow(0.25))
    return torch.exp(-delta**2 / 8) / math.sqrt(2 * math.pi) / 2 * sd_delta
