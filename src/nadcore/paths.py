"""Where the project's folders are: the source checkout, the results bundle and the data of the
stand-ins read from files. Light (no torch): the command line reads it before anything heavy loads.

The bundle (`locate`): `$NADBOOK_BUNDLE`, else the checkout's `bundle/`; installed from a wheel (no
checkout), the `bundle/` of the current folder or of its parent (a book folder), else `./bundle`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def checkout() -> Path | None:
    """The source checkout this module runs from (`src/nadcore` beside `pyproject.toml`), or None
    when it is installed from a wheel."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "src" / "nadcore").is_dir() else None


def locate(environ: Mapping[str, str] | None = None, cwd: str | Path | None = None) -> Path:
    """The bundle folder: `$NADBOOK_BUNDLE` if set, else the checkout's `bundle/`; without a checkout
    (a wheel), the `bundle/` of `cwd` (default the current folder) or of its parent, else `cwd/bundle`."""
    environ = os.environ if environ is None else environ
    if environ.get("NADBOOK_BUNDLE"):
        return Path(environ["NADBOOK_BUNDLE"]).expanduser().resolve()
    root = checkout()
    if root is not None:
        return root / "bundle"
    here = Path.cwd() if cwd is None else Path(cwd)
    found = [d / "bundle" for d in (here, here.parent) if (d / "bundle").is_dir()]
    return (found[0] if found else here / "bundle").resolve()


# The file at the top of a committed results bundle: what makes a folder a bundle, wherever it is (`bundle_of`).
BUNDLE_MARKER = ".nadbook-bundle"


def bundle_of(path: str | Path) -> Path | None:
    """The results bundle that `path` (a file or folder, existing or not) lies in, every symlink and `..` resolved
    (`os.path.realpath`): the nearest folder above it holding `BUNDLE_MARKER`, or None."""
    real = Path(os.path.realpath(path))
    return next((d for d in (real, *real.parents) if (d / BUNDLE_MARKER).is_file()), None)


BUNDLE = locate()
DATA = (checkout() or BUNDLE.parent) / "data"   # data_root of the stand-ins read from files (Fashion-MNIST);
# without a checkout, beside the bundle
