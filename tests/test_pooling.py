"""nadcore.pooling: Eq. 1 against avg_pool1d, Theorem 1 and Lemma 1 against Monte-Carlo simulation."""

import math

import numpy as np
import pytest
import torch

from nadcore import pooling as P

D, S = 64, 4


def test_aliasing_matrix_shape_and_rows():
    A = P.aliasing_matrix(12, 3)
    assert A.shape == (4, 12)
    torch.testing.assert_close(A @ A.T, torch.eye(4, dtype=torch.float64))
    torch.testing.assert_close(A[:, :4] * math.sqrt(3), torch.eye(4, dtype=torch.float64))


def test_eq1_reproduces_avg_pool1d():
    x = torch.randn(7, D, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    z = torch.nn.functional.avg_pool1d(x[:, None], S)[:, 0]
    m_hat = P.prefilter("average", D, S)
    torch.testing.assert_close(P.pool_spectrum(torch.fft.fft(x, norm="ortho"), m_hat, S),
                               torch.fft.fft(z, norm="ortho"), atol=1e-12, rtol=0)
    torch.testing.assert_close(P.pool(x, m_hat, S), z, atol=1e-12, rtol=0)


@pytest.mark.parametrize("kind", ["gaussian", "ideal"])
def test_symmetric_prefilters_are_real_and_hermitian(kind):
    m = P.prefilter(kind, D, S)
    assert not m.is_complex()
    torch.testing.assert_close(m, m.roll(-1).flip(0))  # m[-f] == m[f]
    assert m[0] == pytest.approx(1.0)


def test_user_prefilter_and_gamma_limits():
    m = torch.ones(D)
    torch.testing.assert_close(P.prefilter(m, D, S), m.double())
    torch.testing.assert_close(P.snr_gamma(m, S), torch.full((D,), 2.0 / math.sqrt(3), dtype=torch.float64))
    assert torch.isinf(P.snr_gamma(P.prefilter("average", D, 1), 1)).all()  # no pooling, no loss
    ideal = P.snr_gamma(P.prefilter("ideal", D, S), S)
    assert torch.isinf(ideal[: D // S // 2]).all() and (ideal[D // S // 2 + 1: D // 2] == 0).all()
    acc = P.bayes_accuracy(P.prefilter("ideal", D, S), S, 1.0, 1.0)
    assert acc[1] == 1.0 and acc[D // 4] == 0.5


def test_gamma_matches_eq2_by_hand():
    m2 = P.prefilter("average", D, S).abs() ** 2
    M, l = D // S, 5
    expected = math.sqrt(S * m2[l] / sum(m2[(l + k * M) % D] for k in range(1, S)))
    assert P.snr_gamma(P.prefilter("average", D, S), S)[l].item() == pytest.approx(expected, rel=1e-12)


def test_conventions_differ_by_sqrt_2S():
    m_hat = P.prefilter("average", D, S)
    exact = torch.special.ndtri(P.bayes_accuracy(m_hat, S, 1.0, 4.0))
    paper = torch.special.ndtri(P.bayes_accuracy(m_hat, S, 1.0, 4.0, convention="paper"))
    ls = [3, 9, 13]
    torch.testing.assert_close(paper[ls] / exact[ls], torch.full((3,), math.sqrt(2 * S), dtype=torch.float64))


@pytest.mark.parametrize("kind", ["average", "gaussian"])
def test_eq2_matches_linear_algebra_for_real_directions(kind):
    """gamma-based accuracy == exact accuracy of the real sine v_l, except where 2l = 0 mod M."""
    m_hat = P.prefilter(kind, D, S)
    acc = P.bayes_accuracy(m_hat, S, 1.0, 2.0)
    for l in [1, 3, 5, 9, 12, 15, 20, 27]:
        direct = P.direction_bayes_accuracy(P.fourier_direction_1d(l, D), m_hat, S, 1.0, 2.0)
        assert direct == pytest.approx(acc[l].item(), abs=1e-9)


def test_theorem1_against_avg_pool1d_simulation(capsys):
    """Bayes accuracy (Theorem 1) vs the test accuracy of LDA fitted on avg_pool1d outputs.

    Tolerance 0.015: 4 binomial standard errors at n_test = 40000 (<= 0.0025 each) plus the
    small excess error of LDA fitted on 20000 samples in 16 dimensions.
    """
    res = P.theorem1_check(D, S, eps=1.0, sigma=3.0, ls=(1, 4, 7, 10, 13), n_train=20000, n_test=40000,
                           progress=False)
    gap = (res["simulated"] - res["theory"]).abs()
    with capsys.disabled():
        print(f"\nTheorem 1 largest |simulated - theory| = {gap.max():.4f}")
    assert gap.max() < 0.015
    assert res["theory"][0] > 0.9 and res["theory"][-1] < 0.55  # the curve does span the range
    assert (res["simulated"] - res["paper"]).abs().max() > 0.05  # the printed constant does not fit


def test_theorem1_edge_direction_uses_linear_algebra():
    """For 2l = 0 mod M, l and -l share an output bin: direction_bayes_accuracy still matches simulation."""
    l = D // S // 2
    m_hat = P.prefilter("average", D, S)
    direct = P.direction_bayes_accuracy(P.fourier_direction_1d(l, D), m_hat, S, 1.0, 3.0)
    sim = P.simulated_accuracy(l, D, S, 1.0, 3.0, n_train=20000, n_test=40000, seed=5)
    assert abs(sim - direct) < 0.015


def test_lemma1_against_monte_carlo(capsys):
    """Expected Hessian (Lemma 1) vs an autograd Hessian averaged over 20000 draws (tolerance 8%)."""
    res = P.lemma1_check(D=16, S=4, l=1, eps=1.0, sigma=0.5, n=20000)
    H, Hmc = res["theory"], res["monte_carlo"]
    gap = ((Hmc - H).abs().max() / H.abs().max()).item()
    with capsys.disabled():
        print(f"\nLemma 1 largest |Monte Carlo - theory| / max|theory| = {gap:.4f}")
    assert gap < 0.08
    m2 = P.prefilter("average", 16, 4).abs() ** 2
    signal = Hmc[1, 1] - 2 / 4 * 0.5**2 * m2[1]  # minus the noise curvature at l
    assert signal > 0.8 * 2 / 4 * m2[1]  # the signal term 2 eps^2 m[l]^2 sigma_theta^2 / S is there


def test_linear_model_and_nads_order():
    model = P.linear_pooling_model(S=4, D=16, seed=0)
    assert model(torch.randn(5, 1, 4, 4)).shape == (5, 1)
    m = model.m
    # Eq. 4: E grad_x f grad_x f^T = sigma_phi^2 sigma_theta^2 diag(m^2) / S (normalised A)
    models = [P.linear_pooling_model(S=4, D=16, seed=s) for s in range(3000)]
    x0 = torch.randn(1, 16)
    grads = torch.stack([torch.autograd.grad(mod(x0.requires_grad_()).sum(), x0)[0][0] for mod in models])
    cov = grads.T @ grads / len(models)
    torch.testing.assert_close(torch.diag(cov), m**2 / 4, atol=0.05 * float(m.max() ** 2), rtol=0)


def test_training_low_zeta_is_slower():
    m = P.prefilter("average", 128, 4).abs()
    kw = dict(eps=1.0, sigma=0.5, n=200, steps=300, lr=0.2, sigma_theta=0.1, sigma_phi=0.1)
    curves = P.loss_curves([0, 28], m, 4, seeds=(0, 1), progress=False, **kw).mean(1)
    assert curves[:, -1].max() < 0.35  # both learnt
    half = (curves < 0.6).float().argmax(1)  # first step below 0.6
    assert half[1] > 2 * half[0]
    assert P.zeta(m, 1.0, 0.5)[0] == pytest.approx(4.0)


@pytest.mark.parametrize("call, match", [
    (lambda: P.aliasing_matrix(10, 3), "S must divide D"),
    (lambda: P.snr_gamma(torch.ones(10), 0), "S must be an integer >= 1"),
    (lambda: P.prefilter("average", 16, -2), "S must be"),
    (lambda: P.prefilter(torch.ones(5), 16, 4), "D=16"),
    (lambda: P.prefilter("box", 16, 4), "kind must be one of average, gaussian, ideal"),
    (lambda: P.bayes_accuracy(torch.ones(16), 4, 1.0, 0.0), "sigma must be"),
    (lambda: P.bayes_accuracy(torch.ones(16), 4, 1.0, -1.0), "sigma must be"),
    (lambda: P.bayes_accuracy(torch.ones(16), 4, 1.0, 1.0, convention="x"), "convention"),
    (lambda: P.expected_hessian(torch.ones(16), 1, 4, 1.0, 0.0), "sigma must be"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
