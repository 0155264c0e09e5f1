"""Names and numbers in words, as the book's prose, tables and figure legends write them (no torch, no
plotting: experiments and plots both read it)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

NAMES = {"logreg": "LogReg", "mlp": "MLP", "lenet": "LeNet", "vgg11": "VGG-11", "vgg11_bn": "VGG-11 (BN)",
         "resnet18": "ResNet-18", "densenet121": "DenseNet-121", "vit": "ViT", "mixer": "MLP-Mixer",
         "convnext": "ConvNeXt", "resnet18_blur": "ResNet-18 (BlurPool)"}   # the networks by their names


def duration(seconds: float) -> str:
    """A time as a reader says it: seconds, minutes below 1.5 h, else hours (whole from 100 h: 2,115 h)."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    hours = seconds / 3600
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{hours:.1f} h" if hours < 100 else f"{hours:,.0f} h"


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def number(x: float, digits: int = 2) -> str:
    """`x` to `digits` significant digits as prose writes it: 0.0042, and 4.5 × 10⁻⁵ where Python writes 4.5e-05."""
    text = f"{x:.{digits}g}"
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(SUPERSCRIPT)}"


def name(arch: str) -> str:
    """The network `arch` by its name (`NAMES`), else `arch` itself (a model of the reader's)."""
    return NAMES.get(arch, arch)


def and_list(items: Iterable[object]) -> str:
    """`items` in words: "", "a", "a and b", "a, b and c"."""
    items = [str(i) for i in items]
    return " and ".join([", ".join(items[:-1]), items[-1]]) if len(items) > 1 else "".join(items)


def span(values: Any, fmt: str = ".1f") -> str:
    """The range of `values` as "lo–hi" in format `fmt`, one number when both ends read the same."""
    lo, hi = f"{min(values):{fmt}}", f"{max(values):{fmt}}"
    return lo if lo == hi else f"{lo}–{hi}"


def count(n: int, noun: str) -> str:
    """`n` and `noun`, plural unless n is 1 (an added s): "1 task", "3 tasks", "1,000 networks"."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")
