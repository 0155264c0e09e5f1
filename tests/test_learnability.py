"""Fig. 1 for any model (`learnability.sweep`) and the check that tells a model's bias from a recipe that
does not train it (`learnability.recipe_check`), on networks small enough for the fast tier."""

import math
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import estimate_kw
from torch import nn

from nadcore import learnability, train

FAST = train.Recipe(epochs=8, max_lr=0.5, batch_size=32)


class Small(nn.Module):
    """A small CNN with one output: it sees every direction of its 16x16 inputs."""

    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Conv2d(1, 4, 5, padding=2), nn.ReLU(), nn.MaxPool2d(4), nn.Flatten(),
                               nn.Linear(4 * 16, 1))

    def forward(self, x):
        return self.f(x)


class Blind(nn.Module):
    """The mean of the image, then a linear map: blind to every sine direction (their mean is 0)."""

    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1, 1))

    def forward(self, x):
        return self.f(x)


SHAPE = (1, 16, 16)


def test_two_logits_train_the_logistic_loss_of_one_output():
    net = Small()
    x, y = torch.randn(8, *SHAPE), torch.tensor([0, 1] * 4)
    z = net(x).reshape(-1)
    ce = F.cross_entropy(learnability.TwoLogits(net)(x), y)
    assert torch.allclose(ce, F.binary_cross_entropy_with_logits(z, y.float()), atol=1e-6)


def test_a_sweep_learns_what_the_model_sees_and_not_what_it_is_blind_to():
    cells = [(1, 0), (3, 2)]
    seen = learnability.sweep(Small, cells, FAST, n=200, eps=48.0, num_seeds=2, input_shape=SHAPE)
    blind = learnability.sweep(Blind, cells, FAST, n=200, eps=48.0, input_shape=SHAPE)
    assert seen.test_acc.shape == seen.train_acc.shape == (2, 2) and seen.loss_history.shape[:2] == (2, 2)
    assert seen.test_acc.min() > 90                              # the classes 48 apart, the noise about 48 long
    assert np.abs(blind.test_acc - learnability.CHANCE).max() < 10   # 200 test samples: chance within 10 points
    assert len(seen.summary().splitlines()) == 2 and set(seen.mean()) == set(cells)
    again = learnability.sweep(Small, cells, FAST, n=200, eps=48.0, num_seeds=2, input_shape=SHAPE)
    assert np.array_equal(again.test_acc, seen.test_acc) and np.array_equal(again.loss_history, seen.loss_history)


def test_the_recipe_check_tells_a_recipe_that_trains_from_one_that_does_not():
    good = learnability.recipe_check(Small, FAST, n=200, input_shape=SHAPE)
    assert good.trains and good.test_acc >= learnability.EASY_ACCURACY and "model's bias" in str(good)
    assert good.loss_last < learnability.LOSS_FALLS < math.log(2)
    flat = learnability.recipe_check(Small, train.Recipe(epochs=8, max_lr=1e-7, batch_size=32), n=200,
                                     input_shape=SHAPE)
    assert not flat.trains and "does not fall" in str(flat) and "raise max_lr" in str(flat)


def test_the_recipe_check_says_when_the_recipe_diverges():
    wild = learnability.recipe_check(Small, train.Recipe(epochs=2, max_lr=1e30, clip=None), n=200, input_shape=SHAPE)
    assert not wild.trains and "diverges" in str(wild)


def test_a_two_logit_model_is_taken_as_it_is():
    two = lambda: nn.Sequential(nn.Flatten(), nn.Linear(256, 2))
    out = learnability.sweep(two, [(1, 1)], FAST, n=200, eps=48.0, input_shape=SHAPE)
    assert out.test_acc.shape == (1, 1)


@pytest.mark.parametrize("kwargs, named", [
    ({"input_shape": (1, 16, 8)}, "input_shape"),
    ({"num_seeds": 0}, "num_seeds"),
    ({"cells": [(40, 0)]}, "kx"),
    ({"cells": []}, "cells"),
    ({"recipe": {"epochs": 1}}, "max_lr"),
    ({"model": Small()}, "model"),
    ({"model": lambda: nn.Sequential(nn.Flatten(), nn.Linear(256, 3))}, "model must have one output"),
    ({"model": lambda: nn.Sequential(nn.Flatten(), nn.Linear(100, 1))}, "input_shape"),
])
def test_bad_input_is_refused_in_one_line_before_any_training(kwargs, named):
    args = {"model": Small, "cells": [(1, 0)], "recipe": FAST, "n": 200, "input_shape": SHAPE} | kwargs
    with pytest.raises(ValueError, match=named) as err:
        learnability.sweep(args.pop("model"), args.pop("cells"), args.pop("recipe"), **args)
    assert "\n" not in str(err.value)


def test_fig6_for_any_model_trains_along_its_nads(tmp_path):
    """Issue 60 item 3: Fig. 6 for a model of yours (one output, trained as two logits), along its own NADs: a
    fresh network per NAD index and seed, reproducible, with bad indices and NADs refused in one line."""

    factory = lambda: nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(1))  # noqa: E731
    res = estimate_kw(factory, 8, input_shape=(1, 8, 8), method="autograd", progress=False)
    kw = dict(n=200, sigma=0.5, num_seeds=2, input_shape=(1, 8, 8), device="cpu")
    with pytest.warns(UserWarning, match=r"^NAD indices 63 are past the estimate's rank \(7 of 8 networks\)"):
        out = learnability.fig6(factory, res, [0, 63], {"epochs": 2, "max_lr": 0.05}, **kw)
    assert out.cells == (0, 63) and out.test_acc.shape == (2, 2) and out.summary().startswith("NAD 0: ")
    assert "+-" in out.summary() and "(2 seeds)" in out.summary()
    again = learnability.fig6(factory, res.nads, [0, 63], {"epochs": 2, "max_lr": 0.05}, **kw)
    np.testing.assert_array_equal(again.test_acc, out.test_acc)
    with pytest.raises(ValueError, match=r"^indices must be NAD indices in \[0, 63\]; got 64"):
        learnability.fig6(factory, res, [64], {"epochs": 1, "max_lr": 0.05}, **kw)
    with pytest.raises(ValueError, match=r"^nads must be a NADResult or NADs as rows of 64 entries"):
        learnability.fig6(factory, np.ones((4, 10)), [0], {"epochs": 1, "max_lr": 0.05}, **kw)


def test_a_sweep_says_what_it_will_cost_before_it_trains(capsys):
    """Issue 60 item 2: `sweep` and `fig6` print their cost on this machine first (one SGD step timed here)."""
    learnability.sweep("logreg", [(0, 1)], {"epochs": 1, "max_lr": 0.1}, n=200, device="cpu")
    err = capsys.readouterr().err
    assert re.search(r"^training 1 network \(200 samples, 1 epochs\): ~\d+ s on this machine \([\d.]+ ms an SGD step, "
                     r"timed here\)$", err.strip()), err
    learnability.sweep("logreg", [(0, 1)], {"epochs": 1, "max_lr": 0.1}, n=200, device="cpu", progress=False)
    assert capsys.readouterr().err == ""


def test_fig6_and_sweep_refuse_what_they_would_misread():
    """The third adversarial pass of issue 58: a frequency (0.5, 0) was truncated to (0, 0), a one-element cell
    raised 'not enough values to unpack', an input shape (1, 4, 4.5) ran as (1, 4, 4), NADs given as a string or
    as zero rows were a ValueError about floats or 'v must hold finite numbers'."""
    recipe = {"epochs": 1, "max_lr": 0.1}
    tiny = lambda: torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 1))  # noqa: E731
    for call, message in (
            (lambda: learnability.sweep(tiny, [(0.5, 0)], recipe, input_shape=(1, 4, 4)), "cells must hold"),
            (lambda: learnability.sweep(tiny, [(1,)], recipe, input_shape=(1, 4, 4)), "cells must hold"),
            (lambda: learnability.fig6(tiny, np.eye(16), [0], recipe, input_shape=(1, 4, 4.5)), "input_shape must be"),
            (lambda: learnability.fig6(tiny, "abc", [0], recipe, input_shape=(1, 4, 4)), "nads must be a NADResult"),
            (lambda: learnability.fig6(tiny, np.zeros((2, 16)), [0], recipe, input_shape=(1, 4, 4)),
             "nads must hold finite, non-zero NADs at the indices trained; row 0 is zero")):
        with pytest.raises(ValueError) as err:
            call()
        assert str(err.value).startswith(message), str(err.value)
