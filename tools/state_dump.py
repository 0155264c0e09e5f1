"""Dump what the book stores and says, to diff before and after a change that must move nothing (issue 59).

    python tools/state_dump.py > before.json      # on the old tree
    python tools/state_dump.py > after.json       # on the new tree
    python tools/state_dump.py --diff before.json after.json

It writes, as sorted JSON: every stored file of the bundle with its key (`store.key` of its settings, as the
code computes it now), its settings' digest and its arrays' content hashes (from its record, or computed where a
record lists none); and every value a page glues (`{notebook: {name: text}}`, the plain-text form the page
reads). `--diff` prints one line per entry that differs and exits 1 when any does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def stored(bundle: Path) -> dict[str, dict]:
    """`{path: {"key", "settings", "arrays"}}` of every `.npz` result under `bundle`."""
    from nadcore import store

    out = {}
    for path in sorted(bundle.rglob("*.npz")):
        rel = str(path.relative_to(bundle))
        try:
            record = store.read_record(path)
        except ValueError as err:             # not a result of the store (a partial chunk of another tool)
            out[rel] = {"unreadable": str(err).split("\n")[0]}
            continue
        settings = record.get("settings")
        metas = record.get("arrays") or {}
        arrays = {k: m.get("sha256") for k, m in sorted(metas.items())}
        if not arrays or not all(arrays.values()):
            arrays = {k: store.content_hash(v) for k, v in sorted(store.load(path).arrays.items())}
        out[rel] = {"key": store.key(settings) if isinstance(settings, dict) else None,
                    "settings": hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16],
                    "arrays": arrays}
    return out


def glued(book: Path) -> dict[str, dict[str, str]]:
    """`{notebook: {name: text}}`: every value a page glues, in its plain-text form."""
    out = {}
    for path in sorted(book.glob("*.ipynb")):
        values = {}
        for cell in json.loads(path.read_text())["cells"]:
            for o in cell.get("outputs", []):
                name = o.get("metadata", {}).get("scrapbook", {}).get("name")
                if name is not None:
                    values[name] = text(o.get("data", {}))
        out[path.stem] = values
    return out


def text(data: dict) -> str:
    """A glued output's text as the page shows it: its Markdown where it has one; its HTML where it has one (a
    table: the plain text of a DataFrame depends on the terminal's width, a Styler's is its address), with the
    random ids pandas gives each styled table (`T_1a2b3`) made one; else its plain text. `data`: the output's
    mime bundle (keys may carry papermill's prefix)."""
    def get(kind):
        value = next((v for k, v in sorted(data.items()) if k.endswith(kind)), None)
        return "".join(value) if isinstance(value, list) else value

    plain, markdown, html = get("text/plain"), get("text/markdown"), get("text/html")
    if markdown is not None:
        return markdown
    if html is not None:
        return re.sub(r"T_[0-9a-f]{5}(_[0-9a-f]+)?", "T_", html)
    return plain if plain is not None else str(next(iter(data.values()), ""))


def diff(before: dict, after: dict, where: str = "") -> list[str]:
    """One line per entry that differs between two dumps (added, removed or changed)."""
    lines = []
    for k in sorted(set(before) | set(after)):
        at = f"{where}/{k}" if where else k
        if k not in after:
            lines.append(f"- {at}")
        elif k not in before:
            lines.append(f"+ {at}")
        elif isinstance(before[k], dict) and isinstance(after[k], dict):
            lines += diff(before[k], after[k], at)
        elif before[k] != after[k]:
            lines.append(f"~ {at}: {str(before[k])[:80]!r} -> {str(after[k])[:80]!r}")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--diff", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two dumps")
    p.add_argument("--bundle", type=Path, default=ROOT / "bundle")
    p.add_argument("--book", type=Path, default=ROOT / "book")
    args = p.parse_args(argv)
    if args.diff:
        before, after = (json.loads(Path(f).read_text()) for f in args.diff)
        lines = diff(before, after)
        print("\n".join(lines) if lines else "no difference")
        return 1 if lines else 0
    json.dump({"stored": stored(args.bundle), "glued": glued(args.book)}, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
