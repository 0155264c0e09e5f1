"""D(v) and D1 (+) D2: exact class offsets, noise statistics, seeding, bad input."""

import pytest
import torch

from nadcore.data import concat_channels, directional_dataset
from nadcore.fourier import fourier_direction


def random_direction(*shape, seed=1):
    v = torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
    return v / v.norm()


def test_shapes_labels_and_halves():
    x, y = directional_dataset(random_direction(1, 32, 32), n=10, sigma=1.0, eps=1.0)
    assert x.shape == (10, 1, 32, 32) and x.dtype == torch.float32
    assert y.dtype == torch.int64 and y.tolist() == [0] * 5 + [1] * 5


def test_two_dim_direction_gets_one_channel():
    x, _ = directional_dataset(fourier_direction(3, 1)[0], n=4, sigma=1.0, eps=1.0)
    assert x.shape == (4, 1, 32, 32)


def test_projection_on_v_is_exactly_plus_minus_half_eps():
    v = fourier_direction(4, -3)
    x, y = directional_dataset(v, n=400, sigma=3.0, eps=0.8)
    proj = x.flatten(1) @ v.flatten()
    expected = 0.4 * (1 - 2 * y.float())
    torch.testing.assert_close(proj, expected, atol=1e-5, rtol=0)


def test_orthogonal_part_has_variance_sigma_squared():
    # Monte Carlo: 4000 samples x 3 channels x 16 x 16. The pooled variance estimate has a
    # relative standard error of sqrt(2 / (4000 * 767)) ~ 0.08%; we allow 1%. Each pixel's
    # variance, sigma^2 (1 - v_i^2), has a relative error ~ 2.2% per pixel; we allow 12%.
    sigma, v = 2.0, random_direction(3, 16, 16)
    x, _ = directional_dataset(v, n=4000, sigma=sigma, eps=1.0, seed=3)
    flat, u = x.flatten(1).double(), v.flatten().double()
    perp = flat - torch.outer(flat @ u, u)
    pooled = perp.pow(2).sum(1).mean() / (u.numel() - 1)
    assert abs(pooled / sigma**2 - 1) < 0.01
    per_pixel = perp.var(0) / (sigma**2 * (1 - u**2))
    assert (per_pixel - 1).abs().max() < 0.12
    assert perp.mean(0).abs().max() < 5 * sigma / 4000**0.5


def test_same_seed_same_data_other_seed_other_data():
    v = random_direction(1, 32, 32)
    a, b, c = (directional_dataset(v, 64, 1.0, 1.0, seed=s) for s in (7, 7, 8))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[0], c[0])


def test_eps_zero_gives_noise_only():
    v = random_direction(1, 8, 8)
    x, _ = directional_dataset(v, 8, 1.0, 0.0)
    assert (x.flatten(1) @ v.flatten()).abs().max() < 1e-5


@pytest.mark.parametrize("kwargs, param", [
    ({"v": torch.ones(1, 4, 4)}, "unit norm"),
    ({"v": torch.ones(4) / 2}, "shape"),
    ({"v": torch.ones(1, 1, 4, 4) / 4}, "shape"),
    ({"sigma": 0.0}, "sigma"),
    ({"sigma": -1.0}, "sigma"),
    ({"eps": -0.1}, "eps"),
    ({"n": 7}, "n must be a positive even int"),
    ({"n": 0}, "n must be a positive even int"),
    ({"n": 10.0}, "n must be a positive even int"),
])
def test_bad_input_is_named(kwargs, param):
    args = {"v": torch.ones(1, 4, 4) / 4, "n": 10, "sigma": 1.0, "eps": 1.0} | kwargs
    with pytest.raises(ValueError, match=param):
        directional_dataset(**args)


def test_concat_channels_stacks_two_distributions():
    v1, v2 = fourier_direction(1, 2), fourier_direction(5, 0)
    d1 = directional_dataset(v1, 20, 1.0, 1.0, seed=0)
    d2 = directional_dataset(v2, 20, 1.0, 0.5, seed=1)
    x, y = concat_channels(d1, d2)
    assert x.shape == (20, 2, 32, 32) and torch.equal(y, d1[1])
    torch.testing.assert_close(x[:, 1:], d2[0])
    torch.testing.assert_close(x[:, 1].flatten(1) @ v2.flatten(), 0.25 * (1 - 2 * y.float()), atol=1e-5, rtol=0)


def test_concat_channels_rejects_mismatches():
    v = fourier_direction(1, 2)
    a = directional_dataset(v, 20, 1.0, 1.0)
    with pytest.raises(ValueError, match="same number and size"):
        concat_channels(a, directional_dataset(v, 10, 1.0, 1.0))
    with pytest.raises(ValueError, match="same label vector"):
        concat_channels(a, (a[0], a[1].flip(0)))



def test_a_noise_or_margin_that_float32_would_zero_is_refused():
    """The adversarial pass of session 35: sigma = 1e-50 gave noiseless data (0 in float32), silently."""
    import torch

    from nadcore import data
    from nadcore.checks import InputError

    v = torch.zeros(1, 4, 4)
    v[0, 0, 0] = 1
    for kw, name in ((dict(sigma=1e-50, eps=1.0), "sigma"), (dict(sigma=1.0, eps=1e-50), "eps")):
        with pytest.raises(InputError, match=f"{name} must be (0 or )?at least"):
            data.directional_dataset(v, 10, seed=0, **kw)
    assert data.directional_dataset(v, 10, 1.0, 0.0, seed=0)[0].shape == (10, 1, 4, 4)
