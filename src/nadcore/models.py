"""The architectures of the papers, CIFAR-style (32x32 inputs), behind one registry.

`build(name, in_channels=1, num_classes=2, pooling=True)` returns a freshly initialised
network; `pooling=False` removes every pooling layer (max, average and the global average
pools) and resizes the first fully connected layer to the larger flattened map (paper Fig. 3).
Strided convolutions (ResNet-18) are not pooling and stay.

LeNet also takes a string `pooling` that swaps its two pooling layers for another downsampling
(`LENET_POOLINGS`; the anti-aliasing chapter): "max" (= True, the published network), "none"
(= False), "avg", "maxblur3"/"maxblur5" (Zhang 2019's MaxBlurPool), "blur3"/"blur5" (a
binomial blur with stride 2) and "strided" (stride-2 convolutions, no pooling layer).

After 2020 (issue 27): `vit`, `mixer` and `convnext` (timm's classes, configured in `nadcore.zoo`)
and `resnet18_blur` (ResNet-18 with Zhang 2019's BlurPool in its strided blocks); they take only
pooling=True, and `config(name)` gives the exact configuration of every architecture.
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

import torch
import torch.nn.functional as F
from torch import nn

from nadcore import checks, zoo
from nadcore.checks import InputError

SIZE = 32  # every network here takes 32x32 inputs

LENET_POOLINGS = ("max", "none", "avg", "maxblur3", "maxblur5", "blur3", "blur5", "strided")
POOLINGS = ("max", "none")  # what the other architectures accept (synonyms of True and False)
BLUR_PADDINGS = ("reflect", "zeros")


MAX_TAPS = 64   # a binomial filter's taps (past about 1,030 its weights overflow a float)


def binomial_filter(size: int, dtype: torch.dtype = torch.float32,
                    device: str | torch.device | None = None) -> torch.Tensor:
    """The 1-D binomial filter of `size` taps, a row of Pascal's triangle over its sum 2^(size - 1):
    [1, 2, 1] / 4 for 3, [1, 4, 6, 4, 1] / 16 for 5 (Zhang 2019's blur filters)."""
    checks.integer("size", size, 1, MAX_TAPS, accepted=f"an integer in [1, {MAX_TAPS}] (the number of taps; "
                   "the book's blurs have 3 and 5)")
    row = [math.comb(size - 1, i) for i in range(size)]
    return torch.tensor(row, dtype=dtype, device=device) / 2 ** (size - 1)


class BlurPool2d(nn.Module):
    """Zhang (2019)'s BlurPool: a fixed binomial blur (outer product of `binomial_filter(size)`,
    summing to 1) applied to each channel, keeping every `stride`-th output.

    `padding` "reflect" (the default, as Zhang's `BlurPool`) or "zeros", (size - 1) // 2 pixels
    before and size // 2 after on each axis, so that an N-pixel side gives ceil(N / stride).
    The filter is built in `forward` on the input's device and dtype, not stored: the module has
    no parameters and no buffers, so networks holding it can be stacked by `nadcore.stacked`
    (`train.vmappable`) and their state_dicts are those of the same network without it.
    """

    def __init__(self, size: int = 3, stride: int = 2, padding: str = "reflect") -> None:
        super().__init__()
        binomial_filter(size)
        checks.integer("stride", stride, 1, accepted="a positive int")
        if padding not in BLUR_PADDINGS:
            raise InputError(f"padding must be one of {', '.join(BLUR_PADDINGS)}; got {padding!r}")
        self.size, self.stride, self.padding = int(size), int(stride), padding

    def extra_repr(self) -> str:
        return f"size={self.size}, stride={self.stride}, padding={self.padding!r}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k = binomial_filter(self.size, x.dtype, x.device)
        C = x.shape[1]
        before, after = (self.size - 1) // 2, self.size // 2
        x = F.pad(x, (before, after, before, after), mode="reflect" if self.padding == "reflect" else "constant")
        return F.conv2d(x, torch.outer(k, k).expand(C, 1, self.size, self.size), None, self.stride, groups=C)


def out_side(layers: Iterable[nn.Module], side: int) -> int:
    """The side of the square feature map after `layers` (Conv2d, pooling, BlurPool2d; others
    keep the size) for a `side` x `side` input."""
    checks.integer("side", side, 1, accepted="an image side >= 1 (pixels)")
    for m in layers:
        if isinstance(m, (nn.Conv2d, nn.MaxPool2d, nn.AvgPool2d)):
            pair = lambda v: v if isinstance(v, tuple) else (v, v)
            k, s, p = pair(m.kernel_size)[0], pair(m.stride)[0], pair(m.padding)[0]
            d = pair(m.dilation)[0] if not isinstance(m, nn.AvgPool2d) else 1
            side = (side + 2 * p - d * (k - 1) - 1) // s + 1
        elif isinstance(m, BlurPool2d):
            side = (side - 1) // m.stride + 1
    return side


class LogReg(nn.Module):
    """One linear layer on the flattened input."""

    def __init__(self, in_channels: int = 1, num_classes: int = 2, pooling: bool | str = True) -> None:
        super().__init__()
        self.fc = nn.Linear(in_channels * SIZE * SIZE, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x.flatten(1))


class MLP(nn.Module):
    """Two hidden ReLU layers, 100 and 20 wide (follow-up paper, App. A.1)."""

    def __init__(self, in_channels: int = 1, num_classes: int = 2, pooling: bool | str = True,
                 widths: Iterable[int] = (100, 20)) -> None:
        super().__init__()
        sizes = (in_channels * SIZE * SIZE, *widths)
        layers = []
        for a, b in zip(sizes, sizes[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.net = nn.Sequential(nn.Flatten(), *layers, nn.Linear(sizes[-1], num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def lenet_pool(pooling: bool | str) -> tuple[list[nn.Module], int]:
    """The downsampling layers LeNet puts after each conv-ReLU for `pooling` (one of
    `LENET_POOLINGS`, True = "max", False = "none"), and the stride of its convolutions.

    "avg": AvgPool2d(2). "maxblur3"/"maxblur5": MaxPool2d(2, stride=1), then BlurPool2d(3 or 5,
    stride 2, reflect padding) (Zhang 2019's MaxBlurPool). "blur3"/"blur5": BlurPool2d alone.
    "strided": no layer; the convolutions take stride 2 (no padding), which gives the published
    14x14 and 5x5 maps. Every variant but "none" ends at 16x5x5 = 400 features.
    """
    if isinstance(pooling, bool):
        pooling = "max" if pooling else "none"
    if pooling not in LENET_POOLINGS:
        raise InputError(f"pooling must be True, False or one of {', '.join(LENET_POOLINGS)}; got {pooling!r}")
    if pooling == "max":
        return [nn.MaxPool2d(2)], 1
    if pooling == "avg":
        return [nn.AvgPool2d(2)], 1
    if pooling.startswith("maxblur"):
        return [nn.MaxPool2d(2, stride=1), BlurPool2d(int(pooling[-1]), 2)], 1
    if pooling.startswith("blur"):
        return [BlurPool2d(int(pooling[-1]), 2)], 1
    return [], 2 if pooling == "strided" else 1


class LeNet(nn.Module):
    """conv5-6, ReLU, maxpool2, conv5-16, ReLU, maxpool2, fc 400-120-84-out.

    `pooling` swaps the two max-pooling layers (`lenet_pool`); widths, classifier and the order
    in which parameters are created stay, the first fc sized to the flattened feature map.
    """

    def __init__(self, in_channels: int = 1, num_classes: int = 2, pooling: bool | str = True) -> None:
        super().__init__()
        pool, stride = lenet_pool(pooling)
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 6, 5, stride), nn.ReLU(), *pool,
            nn.Conv2d(6, 16, 5, stride), nn.ReLU(), *pool,
        )
        side = out_side(self.features, SIZE)
        self.classifier = nn.Sequential(
            nn.Linear(16 * side * side, 120), nn.ReLU(),
            nn.Linear(120, 84), nn.ReLU(),
            nn.Linear(84, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x).flatten(1))


VGG11_CFG = (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M")


class VGG(nn.Module):
    """VGG11 with 3x3 convs (He-normal init, zero bias) and a 512-512-512-out classifier."""

    def __init__(self, in_channels: int = 1, num_classes: int = 2, pooling: bool = True, batch_norm: bool = False,
                 cfg: Sequence[int | Literal["M"]] = VGG11_CFG) -> None:
        super().__init__()
        layers, channels = [], in_channels
        for item in cfg:
            if item == "M":
                layers += [nn.MaxPool2d(2)] if pooling else []
                continue
            layers += [nn.Conv2d(channels, item, 3, padding=1)]
            layers += [nn.BatchNorm2d(item)] if batch_norm else []
            layers += [nn.ReLU(inplace=True)]
            channels = item
        self.features = nn.Sequential(*layers)
        side = SIZE // 2 ** cfg.count("M") if pooling else SIZE
        self.classifier = nn.Sequential(
            nn.Linear(channels * side * side, 512), nn.ReLU(True), nn.Dropout(),
            nn.Linear(512, 512), nn.ReLU(True), nn.Dropout(),
            nn.Linear(512, num_classes),
        )
        for m in self.features:
            if isinstance(m, nn.Conv2d) and m.bias is not None:   # every conv here has a bias
                nn.init.normal_(m.weight, 0.0, math.sqrt(2.0 / (m.kernel_size[0] * m.kernel_size[1] * m.out_channels)))
                nn.init.zeros_(m.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x).flatten(1))


class BasicBlock(nn.Module):
    """Two 3x3 conv-BN layers with an identity (or 1x1 conv-BN) shortcut.

    `blur` (a filter size, e.g. 3) anti-aliases a strided block as Zhang (2019)'s ResNets: the first
    conv takes stride 1 and `BlurPool2d(blur, stride)` follows its ReLU; the shortcut blurs and
    subsamples before its 1x1 conv. The parameters (and their initialisation) are unchanged.
    """

    def __init__(self, in_planes: int, planes: int, stride: int = 1, blur: int | None = None) -> None:
        super().__init__()
        down = [BlurPool2d(blur, stride)] if blur and stride != 1 else []
        conv_stride = 1 if down else stride
        self.body = nn.Sequential(
            nn.Conv2d(in_planes, planes, 3, conv_stride, 1, bias=False), nn.BatchNorm2d(planes), nn.ReLU(inplace=True),
            *down, nn.Conv2d(planes, planes, 3, 1, 1, bias=False), nn.BatchNorm2d(planes),
        )
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(*(BlurPool2d(blur, stride) for _ in down),  # ty: ignore[invalid-argument-type]
                                          nn.Conv2d(in_planes, planes, 1, conv_stride, bias=False),
                                          nn.BatchNorm2d(planes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + self.shortcut(x))


class ResNet18(nn.Module):
    """BasicBlocks [2, 2, 2, 2], 3x3 stride-1 stem, no max-pool, global average pool, one linear.

    `blur` (a filter size) anti-aliases the three strided blocks (`BasicBlock`): `resnet18_blur`,
    with ResNet-18's 11,168,706 parameters (one input channel, two classes) and initialisation.
    """

    def __init__(self, in_channels: int = 1, num_classes: int = 2, pooling: bool = True,
                 blocks: Iterable[int] = (2, 2, 2, 2), blur: int | None = None) -> None:
        super().__init__()
        layers: list[nn.Module] = [nn.Conv2d(in_channels, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64),
                                   nn.ReLU(inplace=True)]
        planes_in = 64
        for i, (planes, n) in enumerate(zip((64, 128, 256, 512), blocks)):
            for j in range(n):
                layers.append(BasicBlock(planes_in, planes, 2 if i > 0 and j == 0 else 1, blur))
                planes_in = planes
        layers += [nn.AvgPool2d(4)] if pooling else []
        self.features = nn.Sequential(*layers)
        side = 1 if pooling else SIZE // 8
        self.linear = nn.Linear(512 * side * side, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(self.features(x).flatten(1))


class Bottleneck(nn.Module):
    """BN-ReLU-conv1x1 (4 * growth), BN-ReLU-conv3x3 (growth), concatenated to the input."""

    def __init__(self, in_planes: int, growth: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.BatchNorm2d(in_planes), nn.ReLU(), nn.Conv2d(in_planes, 4 * growth, 1, bias=False),
            nn.BatchNorm2d(4 * growth), nn.ReLU(), nn.Conv2d(4 * growth, growth, 3, padding=1, bias=False),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.body(x), x], 1)


class DenseNet121(nn.Module):
    """Bottleneck blocks [6, 12, 24, 16], growth 32, reduction 0.5, average-pool transitions."""

    def __init__(self, in_channels: int = 1, num_classes: int = 2, pooling: bool = True,
                 blocks: Sequence[int] = (6, 12, 24, 16), growth: int = 32, reduction: float = 0.5) -> None:
        super().__init__()
        planes = 2 * growth
        layers: list[nn.Module] = [nn.Conv2d(in_channels, planes, 3, padding=1, bias=False)]
        for i, n in enumerate(blocks):
            for _ in range(n):
                layers.append(Bottleneck(planes, growth))
                planes += growth
            if i < len(blocks) - 1:  # transition: BN-ReLU-conv1x1, then average pool
                out = int(math.floor(planes * reduction))
                layers += [nn.BatchNorm2d(planes), nn.ReLU(), nn.Conv2d(planes, out, 1, bias=False)]
                layers += [nn.AvgPool2d(2)] if pooling else []
                planes = out
        layers += [nn.BatchNorm2d(planes), nn.ReLU()]
        layers += [nn.AvgPool2d(4)] if pooling else []
        self.features = nn.Sequential(*layers)
        side = 1 if pooling else SIZE
        self.linear = nn.Linear(planes * side * side, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(self.features(x).flatten(1))


REGISTRY: dict[str, Callable[..., nn.Module]] = {
    "logreg": LogReg,
    "mlp": MLP,
    "lenet": LeNet,
    "vgg11": VGG,
    "vgg11_bn": lambda **kw: VGG(batch_norm=True, **kw),
    "resnet18": ResNet18,
    "densenet121": DenseNet121,
    # after 2020 (issue 27): `zoo` builds the first three from timm's classes
    "vit": lambda pooling, **kw: zoo.build("vit", **kw),
    "mixer": lambda pooling, **kw: zoo.build("mixer", **kw),
    "convnext": lambda pooling, **kw: zoo.build("convnext", **kw),
    "resnet18_blur": lambda **kw: ResNet18(blur=RESNET_BLUR, **kw),
}
RESNET_BLUR = 3  # resnet18_blur's binomial filter (Zhang 2019's "Tri-3", timm's default)

# Architectures whose pooling is part of their design: `build` takes only pooling=True ("max") for them.
FIXED_POOLING = {**zoo.POOLING, "resnet18_blur": "blurred strided blocks and a global average pool"}


def names() -> list[str]:
    """The architecture names `build` accepts."""
    return list(REGISTRY)


def config(name: str) -> dict[str, Any]:
    """The configuration of registry architecture `name` as a plain dict (for settings records):
    the timm class and its arguments for `zoo`'s networks, the class and its options otherwise."""
    if name not in REGISTRY:
        raise InputError(f"name must be one of {', '.join(names())}; got {name!r}")
    if name in zoo.CONFIGS:
        return zoo.config(name)
    return copy.deepcopy(CONFIGS.get(name, {"class": getattr(REGISTRY[name], "__name__", name)}))


CONFIGS = {  # `config` of the registry's own networks that are not a class with its defaults
    "vgg11_bn": {"class": "VGG", "batch_norm": True},
    "resnet18_blur": {"class": "ResNet18", "blocks": [2, 2, 2, 2], "widths": [64, 128, 256, 512],
                      "stem": "conv3x3 stride 1, no max-pool", "blur": RESNET_BLUR, "blur_padding": "reflect",
                      "blurred": "strided blocks: after conv1's ReLU (conv1 stride 1), before the shortcut's 1x1 conv"},
}


def libraries(name: str) -> tuple[str, ...]:
    """The libraries besides torch whose code decides the numbers of a freshly built `name` network
    (timm's classes and initialisation for `zoo`'s; none for the others): `store.make_record` names
    their versions in every record whose settings name `name`."""
    if name not in REGISTRY:
        raise InputError(f"name must be one of {', '.join(names())}; got {name!r}")
    return ("timm",) if name in zoo.CONFIGS else ()


def _positive_int(name, value):
    checks.integer(name, value, 1, accepted="a positive int")


def poolings(name: str) -> tuple[str, ...]:
    """The string values of `pooling` that `build(name, ...)` accepts besides True and False
    (only "max", a synonym of True, for `FIXED_POOLING`'s architectures, which refuse False)."""
    return LENET_POOLINGS if name == "lenet" else ("max",) if name in FIXED_POOLING else POOLINGS


def check_pooling(name: str, pooling: bool | str) -> bool | str:
    """`pooling` for registry network `name` as `build` passes it on: a bool, or LeNet's string."""
    if name in FIXED_POOLING:
        if pooling is not True and pooling != "max":
            raise InputError(f"pooling must be True or 'max' for {name} (its pooling is fixed: "
                             f"{FIXED_POOLING[name]}); got {pooling!r}")
        return True
    if isinstance(pooling, bool):
        pooling = "max" if pooling else "none"
    elif not (isinstance(pooling, str) and pooling in poolings(name)):
        raise InputError(f"pooling must be True, False or one of {', '.join(poolings(name))} for {name}; "
                         f"got {pooling!r}")
    return pooling if name == "lenet" else pooling == "max"


MAX_WIDTH = 100_000   # input channels or classes of a registry network: the weights stay under a few GB


def build(name: str, in_channels: int = 1, num_classes: int = 2, pooling: bool | str = True) -> nn.Module:
    """A freshly initialised `name` network for `in_channels`x32x32 inputs and `num_classes` logits.

    `pooling`: True (the published pooling) or False (none); "max" and "none" are synonyms of
    True and False for every architecture (for ResNet-18 and DenseNet-121, whose pooling is
    average pooling, "max" still means their published pooling). LeNet also takes the variants
    of `LENET_POOLINGS` (see `lenet_pool`). The architectures after 2020 (`vit`, `mixer`,
    `convnext`: `nadcore.zoo`; `resnet18_blur`) take only True ("max"): their pooling is part of
    their design (`FIXED_POOLING`). `config(name)` gives each network's exact configuration.
    """
    if name not in REGISTRY:
        raise InputError(f"name must be one of {', '.join(names())}; got {name!r}")
    _positive_int("in_channels", in_channels)
    _positive_int("num_classes", num_classes)
    if in_channels > MAX_WIDTH or num_classes > MAX_WIDTH:
        raise InputError(f"{'in_channels' if in_channels > MAX_WIDTH else 'num_classes'} must be at most "
                         f"{MAX_WIDTH:,} (the layers' weights grow with it); got "
                         f"{in_channels if in_channels > MAX_WIDTH else num_classes}")
    pooling = check_pooling(name, pooling)
    return REGISTRY[name](in_channels=in_channels, num_classes=num_classes, pooling=pooling)


def has_pooling(model: nn.Module) -> bool:
    """True when `model` contains a max, average or blur pooling layer (`BlurPool2d`)."""
    pools = (nn.MaxPool2d, nn.AvgPool2d, nn.AdaptiveAvgPool2d, nn.AdaptiveMaxPool2d, BlurPool2d)
    return any(isinstance(m, pools) for m in model.modules())


class Linearised(nn.Module):
    """`net` linearised at its present weights theta_0 (the neural tangent kernel's model of Ortiz-Jimenez et al.,
    2021): f_lin(x; theta) = f(x; theta_0) + J_theta f(x; theta_0) (theta - theta_0), by one `torch.func.jvp`.
    theta_0 (and `net`'s buffers) are this module's buffers, so `train.fit_many` trains it alone, never stacked;
    the parameters theta start at theta_0, so the model starts as `net`. `net` itself is left as it was."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        if not isinstance(net, nn.Module):
            raise InputError(f"net must be a network (an nn.Module instance); got {net!r:.80}")
        if not any(p.requires_grad for p in net.parameters()):
            raise InputError("net must have trainable parameters: its linearisation is in them")
        if any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in net.modules()):
            raise InputError("net must have no batch norm: its statistics are not weights at which f is linearised")
        trainable = [p.requires_grad for p in net.parameters()]
        frozen = copy.deepcopy(net).requires_grad_(False)
        self._frozen = (frozen,)   # not a submodule: its weights are the buffers theta0_i
        self.names = [n for n, _ in frozen.named_parameters()]
        self.buffer_names = [n for n, _ in frozen.named_buffers()]
        for i, (_, p) in enumerate(frozen.named_parameters()):
            self.register_buffer(f"theta0_{i}", p.detach().clone())
        for i, (_, b) in enumerate(frozen.named_buffers()):
            self.register_buffer(f"net_buffer_{i}", b.detach().clone())
        self.theta = nn.ParameterList([nn.Parameter(p.detach().clone(), requires_grad=t)   # frozen ones stay frozen
                                       for p, t in zip(frozen.parameters(), trainable)])
        self.train(net.training)

    def train(self, mode: bool = True) -> Linearised:
        self._frozen[0].train(mode)
        return super().train(mode)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from torch.func import functional_call, jvp

        theta0 = {n: getattr(self, f"theta0_{i}") for i, n in enumerate(self.names)}
        buffers = {n: getattr(self, f"net_buffer_{i}") for i, n in enumerate(self.buffer_names)}
        step = {n: t - theta0[n] for n, t in zip(self.names, self.theta)}
        with warnings.catch_warnings():   # torch's first forward-mode call scripts helpers with a deprecated API
            warnings.filterwarnings("ignore", message=".*torch.jit.script.* is deprecated", category=DeprecationWarning)
            out = jvp(lambda p: functional_call(self._frozen[0], {**p, **buffers}, (x,)), (theta0,), (step,))
        return out[0] + out[1]   # f(x; theta_0) + J (theta - theta_0)
