"""The architectures of the papers, CIFAR-style (32x32 inputs), behind one registry.

`build(name, in_channels=1, num_classes=2, pooling=True)` returns a freshly initialised
network; `pooling=False` removes every pooling layer (max, average and the global average
pools) and resizes the first fully connected layer to the larger flattened map (paper Fig. 3).
Strided convolutions (ResNet-18) are not pooling and stay.
"""

import math

import torch
from torch import nn

SIZE = 32  # every network here takes 32x32 inputs


class LogReg(nn.Module):
    """One linear layer on the flattened input."""

    def __init__(self, in_channels=1, num_classes=2, pooling=True):
        super().__init__()
        self.fc = nn.Linear(in_channels * SIZE * SIZE, num_classes)

    def forward(self, x):
        return self.fc(x.flatten(1))


class MLP(nn.Module):
    """Two hidden ReLU layers, 100 and 20 wide (follow-up paper, App. A.1)."""

    def __init__(self, in_channels=1, num_classes=2, pooling=True, widths=(100, 20)):
        super().__init__()
        sizes = (in_channels * SIZE * SIZE, *widths)
        layers = []
        for a, b in zip(sizes, sizes[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.net = nn.Sequential(nn.Flatten(), *layers, nn.Linear(sizes[-1], num_classes))

    def forward(self, x):
        return self.net(x)


class LeNet(nn.Module):
    """conv5-6, ReLU, maxpool2, conv5-16, ReLU, maxpool2, fc 400-120-84-out."""

    def __init__(self, in_channels=1, num_classes=2, pooling=True):
        super().__init__()
        pool = [nn.MaxPool2d(2)] if pooling else []
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 6, 5), nn.ReLU(), *pool,
            nn.Conv2d(6, 16, 5), nn.ReLU(), *pool,
        )
        side = 5 if pooling else SIZE - 8
        self.classifier = nn.Sequential(
            nn.Linear(16 * side * side, 120), nn.ReLU(),
            nn.Linear(120, 84), nn.ReLU(),
            nn.Linear(84, num_classes),
        )

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


VGG11_CFG = (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M")


class VGG(nn.Module):
    """VGG11 with 3x3 convs (He-normal init, zero bias) and a 512-512-512-out classifier."""

    def __init__(self, in_channels=1, num_classes=2, pooling=True, batch_norm=False, cfg=VGG11_CFG):
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
            if isinstance(m, nn.Conv2d):
                nn.init.normal_(m.weight, 0.0, math.sqrt(2.0 / (m.kernel_size[0] * m.kernel_size[1] * m.out_channels)))
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


class BasicBlock(nn.Module):
    """Two 3x3 conv-BN layers with an identity (or 1x1 conv-BN) shortcut."""

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(in_planes, planes, 3, stride, 1, bias=False), nn.BatchNorm2d(planes), nn.ReLU(inplace=True),
            nn.Conv2d(planes, planes, 3, 1, 1, bias=False), nn.BatchNorm2d(planes),
        )
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        return torch.relu(self.body(x) + self.shortcut(x))


class ResNet18(nn.Module):
    """BasicBlocks [2, 2, 2, 2], 3x3 stride-1 stem, no max-pool, global average pool, one linear."""

    def __init__(self, in_channels=1, num_classes=2, pooling=True, blocks=(2, 2, 2, 2)):
        super().__init__()
        layers, planes_in = [nn.Conv2d(in_channels, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True)], 64
        for i, (planes, n) in enumerate(zip((64, 128, 256, 512), blocks)):
            for j in range(n):
                layers.append(BasicBlock(planes_in, planes, 2 if i > 0 and j == 0 else 1))
                planes_in = planes
        layers += [nn.AvgPool2d(4)] if pooling else []
        self.features = nn.Sequential(*layers)
        side = 1 if pooling else SIZE // 8
        self.linear = nn.Linear(512 * side * side, num_classes)

    def forward(self, x):
        return self.linear(self.features(x).flatten(1))


class Bottleneck(nn.Module):
    """BN-ReLU-conv1x1 (4 * growth), BN-ReLU-conv3x3 (growth), concatenated to the input."""

    def __init__(self, in_planes, growth):
        super().__init__()
        self.body = nn.Sequential(
            nn.BatchNorm2d(in_planes), nn.ReLU(), nn.Conv2d(in_planes, 4 * growth, 1, bias=False),
            nn.BatchNorm2d(4 * growth), nn.ReLU(), nn.Conv2d(4 * growth, growth, 3, padding=1, bias=False),
        )

    def forward(self, x):
        return torch.cat([self.body(x), x], 1)


class DenseNet121(nn.Module):
    """Bottleneck blocks [6, 12, 24, 16], growth 32, reduction 0.5, average-pool transitions."""

    def __init__(self, in_channels=1, num_classes=2, pooling=True, blocks=(6, 12, 24, 16), growth=32, reduction=0.5):
        super().__init__()
        planes = 2 * growth
        layers = [nn.Conv2d(in_channels, planes, 3, padding=1, bias=False)]
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

    def forward(self, x):
        return self.linear(self.features(x).flatten(1))


REGISTRY = {
    "logreg": LogReg,
    "mlp": MLP,
    "lenet": LeNet,
    "vgg11": VGG,
    "vgg11_bn": lambda **kw: VGG(batch_norm=True, **kw),
    "resnet18": ResNet18,
    "densenet121": DenseNet121,
}


def names():
    """The architecture names `build` accepts."""
    return list(REGISTRY)


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int; got {value!r}")


def build(name, in_channels=1, num_classes=2, pooling=True):
    """A freshly initialised `name` network for `in_channels`x32x32 inputs and `num_classes` logits."""
    if name not in REGISTRY:
        raise ValueError(f"name must be one of {', '.join(names())}; got {name!r}")
    _positive_int("in_channels", in_channels)
    _positive_int("num_classes", num_classes)
    if not isinstance(pooling, bool):
        raise ValueError(f"pooling must be True or False; got {pooling!r}")
    return REGISTRY[name](in_channels=in_channels, num_classes=num_classes, pooling=pooling)


def has_pooling(model):
    """True when `model` contains a max or average pooling layer."""
    return any(isinstance(m, (nn.MaxPool2d, nn.AvgPool2d, nn.AdaptiveAvgPool2d, nn.AdaptiveMaxPool2d)) for m in model.modules())
