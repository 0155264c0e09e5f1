"""The model registry: output shapes, pooling removal, fresh initialisation, bad input."""

import math

import pytest
import torch
from torch import nn

from nadcore import models

SMALL = ("logreg", "mlp", "lenet")  # cheap enough to run for real
CNNS = ("lenet", "vgg11", "vgg11_bn", "resnet18", "densenet121")


def test_names_lists_the_papers_architectures():
    assert models.names() == ["logreg", "mlp", "lenet", "vgg11", "vgg11_bn", "resnet18", "densenet121"]


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
    first_fc = lambda m: next(x for x in m.modules() if isinstance(x, nn.Linear))  # noqa: E731
    assert first_fc(plain).in_features > first_fc(pooled).in_features


def test_flattened_sizes_match_the_architectures():
    with torch.device("meta"):
        lenet, lenet_np = models.build("lenet"), models.build("lenet", pooling=False)
        resnet_np = models.build("resnet18", pooling=False)
    assert lenet.classifier[0].in_features == 400
    assert lenet_np.classifier[0].in_features == 16 * 24 * 24
    assert resnet_np.linear.in_features == 512 * 4 * 4  # strided convs still downsample to 4x4


def test_parameter_counts_match_the_cifar_architectures():
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
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
