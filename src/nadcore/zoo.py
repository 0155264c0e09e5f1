"""Architectures after 2020 for 32x32 inputs, built from timm's configurable classes (issue 27).

- `vit`: a Vision Transformer (Dosovitskiy et al. 2021) of ViT-Tiny's width at half its depth:
  4x4 patches (64 tokens), width 192, 6 blocks of 3 heads, MLP ratio 4, learned position
  embeddings, a class token read by the head (no pooling, as the ViT and DeiT papers);
  2,685,890 parameters (one input channel, two classes, as all counts here).
- `mixer`: an MLP-Mixer (Tolstikhin et al. 2021): 4x4 patches (64 tokens), width 128, 8 blocks,
  token MLP 32 and channel MLP 512 wide (ratios 0.5 and 4 as Mixer-S), global average of the tokens;
  1,127,042 parameters.
  Its head is initialised as its other linear layers (Xavier-uniform weights, zero bias), not with
  timm's zeros: a zero head makes every network at initialisation a constant, without NADs.
- `convnext`: ConvNeXt-Atto (Liu et al. 2022; depths 2, 2, 6, 2, widths 40, 80, 160, 320) as
  published: a 4x4 patchify stem, so on a 32-pixel image its stages work at 8, 4, 2 and 1 pixels
  (the ViT's 8x8 grid of 4x4 patches, then 2x2 downsamplings); 7x7 depthwise convolutions,
  LayerNorm, layer scale initialised at 1e-6 (the published default: at initialisation the residual
  branches are scaled down by 1e-6), global average pool, LayerNorm and the linear head; 3,373,882
  parameters. Not the 1x1 stem of CIFAR adaptations: on one input channel, the stem's LayerNorm over
  its 40 outputs sees each pixel through a zero-bias linear map, normalises its value away and keeps
  only its sign (measured: the gradients of 150 such networks have effective rank 1.3 of 1,024;
  134 with the 4x4 stem, 138 for isotropic gradients).

timm's own initialisation of each class (ViT: truncated normal, std 0.02, for its linear layers
and position embedding, PyTorch's default for its patch convolution; ConvNeXt: truncated normal,
std 0.02, for convolutions and linear layers; Mixer: Xavier-uniform linear layers, LeCun-normal
stem), every drop rate 0. The `nn.Dropout(p=0)` modules timm leaves are replaced by identities
(`NoDropout`: the same function), so that `train.fit_many` can stack the networks
(`train.vmappable`). timm is imported when a network is built: importing `nadcore.models` stays
free of it (and of torchvision). uv.lock pins timm: a release that changes an initialisation
moves these networks' NADs (their stored numbers then need a `versions.VERSIONS` bump).
"""

from __future__ import annotations

import copy
from typing import Any

from torch import nn

from nadcore import extras
from nadcore.checks import InputError

CONFIGS = {
    "vit": {"timm_class": "VisionTransformer", "img_size": 32, "patch_size": 4, "embed_dim": 192, "depth": 6,
            "num_heads": 3, "mlp_ratio": 4.0, "qkv_bias": True, "class_token": True, "global_pool": "token",
            "pos_embed": "learn", "weight_init": "", "drop_rate": 0.0, "pos_drop_rate": 0.0,
            "proj_drop_rate": 0.0, "attn_drop_rate": 0.0, "drop_path_rate": 0.0},
    "mixer": {"timm_class": "MlpMixer", "img_size": 32, "patch_size": 4, "embed_dim": 128, "num_blocks": 8,
              "mlp_ratio": [0.5, 4.0], "global_pool": "avg", "stem_norm": False, "nlhb": False,
              "drop_rate": 0.0, "proj_drop_rate": 0.0, "drop_path_rate": 0.0, "head_init": "xavier_uniform"},
    "convnext": {"timm_class": "ConvNeXt", "patch_size": 4, "stem_type": "patch", "depths": [2, 2, 6, 2],
                 "dims": [40, 80, 160, 320], "kernel_sizes": 7, "ls_init_value": 1e-6, "conv_mlp": False,
                 "global_pool": "avg", "head_init_scale": 1.0, "drop_rate": 0.0, "drop_path_rate": 0.0},
}

POOLING = {  # what each architecture does in place of pooling; `build` accepts only pooling=True for them
    "vit": "the head reads the class token",
    "mixer": "global average of the tokens",
    "convnext": "global average pool",
}


def names() -> list[str]:
    """The architectures this module builds."""
    return list(CONFIGS)


def config(name: str) -> dict[str, Any]:
    """The configuration of `name` (a fresh copy: the timm class and its keyword arguments)."""
    if name not in CONFIGS:
        raise InputError(f"name must be one of {', '.join(names())}; got {name!r}")
    return copy.deepcopy(CONFIGS[name])


def build(name: str, in_channels: int = 1, num_classes: int = 2) -> nn.Module:
    """A freshly initialised `name` network (timm's initialisation), dropout modules removed."""
    kwargs = config(name)
    cls, head_init = _timm_class(kwargs.pop("timm_class")), kwargs.pop("head_init", None)
    for key in ("mlp_ratio", "depths", "dims"):
        if isinstance(kwargs.get(key), list):
            kwargs[key] = tuple(kwargs[key])
    model = cls(in_chans=in_channels, num_classes=num_classes, **kwargs)
    if head_init == "xavier_uniform":
        nn.init.xavier_uniform_(model.head.weight)
        nn.init.zeros_(model.head.bias)
    return without_dropout(model)


def _timm_class(name):
    module = {"VisionTransformer": "vision_transformer", "MlpMixer": "mlp_mixer", "ConvNeXt": "convnext"}[name]
    return getattr(extras.require(f"timm.models.{module}", "zoo", f"the {name} architectures"), name)


class NoDropout(nn.Identity):
    """The identity in place of a `nn.Dropout(p=0)`; keeps `p` (timm's fused attention reads it)."""

    p = 0.0


def without_dropout(model: nn.Module) -> nn.Module:
    """`model` with every `nn.Dropout(p=0)` replaced by `NoDropout` (in place); a dropout with
    p > 0 is an error (the registry's networks are deterministic)."""
    for name, m in list(model.named_modules()):
        if isinstance(m, nn.modules.dropout._DropoutNd):
            if m.p != 0:
                raise ValueError(f"{name} is a dropout with p={m.p}: the registry's networks have drop rates 0")
            parent, _, leaf = name.rpartition(".")
            setattr(model.get_submodule(parent), leaf, NoDropout())
    return model
