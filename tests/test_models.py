"""The model registry: output shapes, pooling removal, fresh initialisation, bad input."""

import math

import pytest
import torch
from conftest import estimate_kw
from torch import nn

from nadcore import models

SMALL = ("logreg", "mlp", "lenet")  # cheap enough to run for real
CNNS = ("lenet", "vgg11", "vgg11_bn", "resnet18", "densenet121")


def test_names_lists_the_papers_architectures():
    assert models.names()[:7] == ["logreg", "mlp", "lenet", "vgg11", "vgg11_bn", "resnet18", "densenet121"]
    assert models.names()[7:] == ["vit", "mixer", "convnext", "resnet18_blur"]   # tests/test_zoo.py


@pytest.mark.parametrize("name", SMALL)
@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize("pooling", [True, False])
def test_small_networks_run(name, channels, pooling):
    model = models.build(name, in_channels=channels, num_classes=2, pooling=pooling)
    out = model(torch.randn(4, channels, 32, 32))
    assert out.shape == (4, 2) and torch.isfinite(out).all()


@pytest.mark.parametrize("name", CNNS)
def test_pooling_false_removes_every_pooling_layer(name):
    with torch.device("meta"):  # shapes only: no memory, no compute (VGG11 without pooling has 278M weights)
        pooled, plain = models.build(name, in_channels=3, num_classes=10), models.build(name, pooling=False)
        assert pooled(torch.zeros(3, 3, 32, 32)).shape == (3, 10)
        assert plain(torch.zeros(3, 1, 32, 32)).shape == (3, 2)
    assert models.has_pooling(pooled) and not models.has_pooling(plain)
    first_fc = lambda m: next(x for x in m.modules() if isinstance(x, nn.Linear))
    assert first_fc(plain).in_features > first_fc(pooled).in_features


def test_flattened_sizes_match_the_architectures():
    with torch.device("meta"):
        lenet, lenet_np = models.build("lenet"), models.build("lenet", pooling=False)
        resnet_np = models.build("resnet18", pooling=False)
    assert lenet.classifier[0].in_features == 400
    assert lenet_np.classifier[0].in_features == 16 * 24 * 24
    assert resnet_np.linear.in_features == 512 * 4 * 4  # strided convs still downsample to 4x4


def test_parameter_counts_match_the_cifar_architectures():
    count = lambda m: sum(p.numel() for p in m.parameters())
    with torch.device("meta"):
        assert count(models.build("lenet", 3, 10)) == 62006
        assert count(models.build("resnet18", 3, 10)) == 11173962
        assert count(models.build("densenet121", 3, 10)) == 6956298


def test_mlp_widths_follow_the_follow_up_paper():
    widths = [m.out_features for m in models.build("mlp").modules() if isinstance(m, nn.Linear)]
    assert widths == [100, 20, 2]


def test_vgg_convs_are_he_normal_with_zero_bias():
    conv = next(m for m in models.build("vgg11").modules() if isinstance(m, nn.Conv2d) and m.out_channels == 512)
    expected = math.sqrt(2.0 / (9 * 512))
    assert abs(conv.weight.std().item() / expected - 1) < 0.02
    assert torch.count_nonzero(conv.bias) == 0


@pytest.mark.parametrize("name", SMALL)
def test_each_build_is_a_fresh_initialisation(name):
    a, b = models.build(name), models.build(name)
    assert not all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_unknown_name_lists_the_accepted_ones():
    with pytest.raises(ValueError, match="name must be one of logreg, mlp, lenet"):
        models.build("resnet50")


@pytest.mark.parametrize("kwargs, param", [
    ({"in_channels": 0}, "in_channels"), ({"num_classes": 1.5}, "num_classes"), ({"pooling": "no"}, "pooling"),
])
def test_bad_arguments_are_named(kwargs, param):
    with pytest.raises(ValueError, match=param):
        models.build("lenet", **kwargs)


# --------------------------------------------------------------------------- LeNet pooling variants

VARIANTS = ("avg", "maxblur3", "maxblur5", "blur3", "blur5", "strided")


def test_binomial_filters_are_zhangs():
    torch.testing.assert_close(models.binomial_filter(3), torch.tensor([1.0, 2.0, 1.0]) / 4)
    torch.testing.assert_close(models.binomial_filter(5), torch.tensor([1.0, 4.0, 6.0, 4.0, 1.0]) / 16)
    for size in (1, 2, 3, 4, 5, 7):
        assert models.binomial_filter(size, torch.float64).sum().item() == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize("size", [3, 5])
def test_blurpool_is_the_separable_binomial_blur(size):
    """BlurPool2d == conv2d with the outer product of the 1-D filter (sums to 1), one channel at a time."""
    x = torch.randn(2, 3, 12, 12, dtype=torch.float64)
    k = models.binomial_filter(size, torch.float64)
    kernel = torch.outer(k, k)
    assert kernel.sum().item() == pytest.approx(1.0, abs=1e-15)
    p = (size - 1) // 2
    expected = torch.cat([nn.functional.conv2d(x[:, c:c + 1], kernel[None, None], stride=2, padding=p)
                          for c in range(3)], 1)
    got = models.BlurPool2d(size, 2, padding="zeros")(x)
    torch.testing.assert_close(got, expected, atol=1e-12, rtol=0)
    assert got.shape == (2, 3, 6, 6)


@pytest.mark.parametrize("size", [3, 5])
def test_blur_of_a_constant_image_is_constant(size):
    x = torch.full((1, 2, 16, 16), 3.5, dtype=torch.float64)
    torch.testing.assert_close(models.BlurPool2d(size)(x),
                               torch.full((1, 2, 8, 8), 3.5, dtype=torch.float64))  # reflect
    zeros = models.BlurPool2d(size, padding="zeros")(x)
    # away from the borders: the first and last outputs' windows reach into the zero padding
    torch.testing.assert_close(zeros[..., 1:-1, 1:-1], torch.full((1, 2, 6, 6), 3.5, dtype=torch.float64))
    assert zeros[0, 0, 0, 0] < 3.5  # the zeros do come in at the border


@pytest.mark.parametrize("pooling", ["max", True, False, "none", *VARIANTS])
@pytest.mark.parametrize("num_classes", [2, 1])
def test_lenet_variants_output_shapes(pooling, num_classes):
    model = models.build("lenet", num_classes=num_classes, pooling=pooling)
    assert model(torch.randn(3, 1, 32, 32)).shape == (3, num_classes)
    sides, h = [], torch.zeros(1, 1, 32, 32)
    for m in model.features:
        h = m(h)
        sides.append(h.shape[-1])
    if pooling in (False, "none"):
        assert model.classifier[0].in_features == 16 * 24 * 24
    else:  # every variant keeps the published 14x14 then 5x5 maps and the 400-120-84 classifier
        assert 14 in sides and sides[-1] == 5 and h.shape[1] == 16
        assert [m.out_features for m in model.classifier if isinstance(m, nn.Linear)] == [120, 84, num_classes]
        assert model.classifier[0].in_features == 400
    convs = [m for m in model.features if isinstance(m, nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size) for c in convs] == [(1, 6, (5, 5)), (6, 16, (5, 5))]
    assert all(c.stride == ((2, 2) if pooling == "strided" else (1, 1)) for c in convs)


@pytest.mark.parametrize("pooling", VARIANTS)
def test_lenet_variants_have_the_published_parameters(pooling):
    """Same parameter shapes, in the same order, as the published LeNet: no trainable or stored filter
    (the names follow the positions in `features`: maxblur and strided number their layers differently)."""
    shapes = lambda m: [tuple(t.shape) for t in m.state_dict().values()]
    assert shapes(models.build("lenet", pooling=pooling)) == shapes(models.build("lenet"))
    assert next(models.build("lenet", pooling=pooling).buffers(), None) is None


def test_pooling_true_and_max_build_the_same_network():
    for synonyms in ((True, "max"), (False, "none")):
        nets = []
        for pooling in synonyms:
            torch.manual_seed(3)
            nets.append(models.build("lenet", pooling=pooling))
        a, b = (n.state_dict() for n in nets)
        assert list(a) == list(b) and all(torch.equal(a[k], b[k]) for k in a)
        x = torch.randn(2, 1, 32, 32)
        assert torch.equal(nets[0](x), nets[1](x))


@pytest.mark.parametrize("pooling", ["maxblur3", "blur5", "strided", "avg"])
def test_variant_forward_in_train_and_eval_modes(pooling):
    model = models.build("lenet", pooling=pooling)
    x = torch.randn(4, 1, 32, 32)
    out_train = model.train()(x)
    out_train.sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    torch.testing.assert_close(model.eval()(x), out_train)  # no state that depends on the mode


def test_has_pooling_counts_blur_pools():
    assert models.has_pooling(models.build("lenet", pooling="blur3"))
    assert models.has_pooling(models.build("lenet", pooling="avg"))
    assert not models.has_pooling(models.build("lenet", pooling="strided"))


@pytest.mark.parametrize("name, pooling", [
    ("lenet", "no"), ("lenet", "blur4"), ("lenet", 1), ("lenet", None), ("vgg11", "avg"), ("resnet18", "blur3"),
    ("logreg", "strided"),
])
def test_bad_pooling_names_the_parameter_and_the_accepted_values(name, pooling):
    with pytest.raises(ValueError, match=r"^pooling must be True, False or one of max, none") as err:
        models.build(name, pooling=pooling)
    assert "\n" not in str(err.value)
    if name == "lenet":
        assert "maxblur3" in str(err.value) and "strided" in str(err.value)


@pytest.mark.parametrize("name", SMALL)
def test_other_architectures_take_max_and_none_as_synonyms(name):
    for synonyms in ((True, "max"), (False, "none")):
        nets = []
        for pooling in synonyms:
            torch.manual_seed(4)
            nets.append(models.build(name, pooling=pooling))
        assert all(torch.equal(p, q) for p, q in zip(nets[0].parameters(), nets[1].parameters()))


@pytest.mark.parametrize("pooling", VARIANTS)
def test_variants_stack_for_fit_many(pooling):
    """No buffers: `train.fit_many` stacks every variant as grouped layers (`stacked.chain`: max,
    average and blur pooling run on the grouped channels) and the stack computes what each network
    does alone."""
    from torch.func import stack_module_state

    from nadcore import stacked, train

    torch.manual_seed(0)
    nets = [models.build("lenet", pooling=pooling) for _ in range(3)]
    assert train.vmappable(nets[0])
    assert stacked.chain(nets[0]) is not None
    x = torch.randn(3, 4, 1, 32, 32)
    params, _ = stack_module_state(nets)
    out = stacked.forward(nets[0])(params, x)
    for j, net in enumerate(nets):
        torch.testing.assert_close(out[j], net(x[j]), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("method", ["secant", "autograd"])
def test_variant_nads_estimate(method):
    """4 networks through `nads.estimate`; one thread: on a busy 2-core machine two threads make
    the 1024x1024 eigendecomposition 20x slower."""

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        res = estimate_kw(lambda: models.build("lenet", num_classes=1, pooling="maxblur3"), 4, method=method,
                            device="cpu", batch_size=4, progress=False)
    finally:
        torch.set_num_threads(threads)
    assert res.eigenvalues.shape == (1024,) and res.eigenvalues[0] > 0
