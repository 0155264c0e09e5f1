"""nadcore's optional parts (pyproject's extras: `zoo`, timm; `book`, the chapters' stack) and the one-line
error that names the extra when one is missing. The core (`pip install nadcore`) imports none of them."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import ModuleType


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message names the extra that installs it."""


def require(module: str, extra: str, what: str) -> ModuleType:
    """Import and return `module`; without it, a one-line `MissingExtra` naming `what` needs it and
    `pip install "nadcore[extra]"`."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise MissingExtra(f"{what} needs {module.split('.')[0]}, which is not installed (pip install "
                           f"\"nadcore[{extra}]\"; {type(err).__name__}: {str(err).splitlines()[0]})") from None
    except Exception as err:   # noqa: BLE001 - installed but broken: a torchvision built for another torch
        hint = ("; torch and torchvision come from different builds: install both from one index (README, "
                "\"Set up\")" if "torchvision::" in str(err) else "")
        raise MissingExtra(f"{what} needs {module.split('.')[0]}, which is installed but does not import "
                           f"({type(err).__name__}: {(str(err).splitlines() or [''])[0][:160]}{hint})") from None
