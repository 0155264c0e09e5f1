"""k networks stacked into one (`nadcore.stacked`): the same logits and gradients as each network alone."""

import pytest
import torch
from torch import nn
from torch.func import stack_module_state

from nadcore import models, stacked

TOL = dict(rtol=1e-5, atol=1e-5)


def copies(build, k=3, seed=0):
    torch.manual_seed(seed)
    return [build() for _ in range(k)]


def check(nets, x):
    """Stacked logits and parameter gradients against each network run alone on its own x[j]."""
    params, _ = stack_module_state(nets)
    out = stacked.forward(nets[0])(params, x)
    out.square().sum().backward()
    for j, net in enumerate(nets):
        ref = net(x[j])
        torch.testing.assert_close(out[j], ref, **TOL)
        ref.square().sum().backward()
        for name, p in net.named_parameters():
            torch.testing.assert_close(params[name].grad[j], p.grad, **TOL)


@pytest.mark.parametrize("name", ["logreg", "mlp", "lenet"])
@pytest.mark.parametrize("pooling", [True, False])
def test_architectures_match_each_network_alone(name, pooling):
    nets = copies(lambda: models.build(name, in_channels=2, num_classes=3, pooling=pooling))
    assert stacked.chain(nets[0]) is not None
    check(nets, torch.randn(3, 5, 2, 32, 32))


@pytest.mark.parametrize("pooling", ["avg", "maxblur3", "blur5", "strided"])
def test_lenet_pooling_variants_stack(pooling):
    nets = copies(lambda: models.build("lenet", pooling=pooling))
    assert stacked.chain(nets[0]) is not None
    check(nets, torch.randn(3, 5, 1, 32, 32))


def test_max_pool_ties_route_the_gradient_like_the_network():
    # Constant image regions give exactly equal conv outputs inside a pooling window; pooling
    # before the bias and the ReLU must still send the gradient where MaxPool2d sends it.
    x = torch.zeros(3, 4, 1, 32, 32)
    x[:, :, :, 8:20, 4:30] = 1.0
    x[:, 1] = torch.randn(3, 1, 32, 32)
    check(copies(lambda: models.build("lenet")), x)


def test_sequential_chains_and_vmap_fallback():
    seq = copies(lambda: nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.MaxPool2d(2), nn.ReLU(),
                                       nn.Conv2d(4, 4, 3, stride=2), nn.Flatten(), nn.Linear(4 * 7 * 7, 2)))
    assert stacked.chain(seq[0]) is not None
    check(seq, torch.randn(3, 6, 1, 32, 32))

    class Skip(nn.Module):  # not a chain: runs through vmap
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(1024, 1024), nn.Linear(1024, 2)

        def forward(self, x):
            x = x.flatten(1)
            return self.b(x + self.a(x).relu())

    skip = copies(Skip)
    assert stacked.chain(skip[0]) is None
    check(skip, torch.randn(3, 4, 1, 32, 32))
    assert stacked.chain(nn.Sequential(nn.Conv2d(1, 2, 3))) is None          # never flattens
    assert stacked.chain(nn.Sequential(nn.Conv2d(1, 2, 3, groups=1), nn.Tanh(), nn.Flatten())) is None


def test_chunk_size_keeps_every_step_tensor_under_budget():
    lenet_conv1 = 128 * 6 * 28 * 28 * 4  # bytes of LeNet's largest activation on a batch of 128
    cpu = stacked.BUDGET["cpu"]
    assert stacked.chunk_size(models.build("lenet"), (1, 32, 32), 128) == cpu // lenet_conv1 == 6
    assert stacked.chunk_size(models.build("logreg"), (1, 32, 32), 128) == cpu // (128 * 1024 * 4) == 32
    assert stacked.chunk_size(models.build("lenet"), (1, 32, 32), 128, budget=1) == 1
    assert (stacked.chunk_size(models.build("lenet"), (1, 32, 32), 128, device="cuda")
            == stacked.BUDGET["other"] // lenet_conv1)
    assert stacked.registry_chunk_size("lenet") == 6                        # the same, by registry name
    assert stacked.registry_chunk_size("lenet", pooling=False) == stacked.chunk_size(
        models.build("lenet", pooling=False), (1, 32, 32), 128) == 3
    for arch in ("densenet121", "convnext"):                                # built on the meta device
        assert stacked.registry_chunk_size(arch) == stacked.chunk_size(models.build(arch), (1, 32, 32), 128)
    torch.manual_seed(0)
    drawn = torch.rand(3)
    torch.manual_seed(0)
    stacked.registry_chunk_size("vgg11", pooling=False, batch_size=32)     # draws no weights
    assert torch.equal(torch.rand(3), drawn)


def test_a_stack_is_a_module_of_its_networks():
    nets = copies(lambda: models.build("lenet"))
    stack = stacked.Stack(nets)
    assert len(stack) == 3 and list(stack.params) == [n for n, _ in nets[0].named_parameters()]
    assert [tuple(p.shape) for p in stack.parameters()] == [(3, *p.shape) for p in nets[0].parameters()]
    x = torch.randn(3, 5, 1, 32, 32)
    out = stack(x)
    for j, net in enumerate(nets):
        torch.testing.assert_close(out[j], net(x[j]), **TOL)
    with torch.no_grad():
        for p in stack.parameters():
            p[1].zero_()
    stack.write_back()                                        # network 1's slices were zeroed, the others kept
    assert all(not p.any() for p in nets[1].parameters()) and all(p.any() for p in nets[0].parameters())


def test_a_stack_refuses_networks_it_cannot_stack():
    with pytest.raises(ValueError, match="^networks must be a non-empty list of torch modules$"):
        stacked.Stack([])
    with pytest.raises(ValueError, match="^networks must share one architecture"):
        stacked.Stack([models.build("lenet"), models.build("logreg")])
    with pytest.raises(ValueError, match="^networks must have no buffers"):
        stacked.Stack([nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2)) for _ in range(2)])
