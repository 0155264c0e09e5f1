"""The `nadcore` command: run a chapter with papermill at any scale, estimate NADs, list chapters."""

import argparse
import sys
from pathlib import Path

from nadcore import __version__

class UsageError(Exception):
    """A reader's mistake on the command line; printed as one line, exit status 2."""


def book_dir():
    """The `book/` folder: beside the current directory if there is one, else beside the package."""
    for base in (Path.cwd(), Path(__file__).resolve().parents[2]):
        if (base / "book").is_dir() and any((base / "book").glob("[0-9][0-9]_*.ipynb")):
            return base / "book"
    raise UsageError("no book/ folder with chapters found; run nadcore from the nadbook checkout")


def chapters(folder):
    """Chapter notebooks by file stem, in book order."""
    return {p.stem: p for p in sorted(Path(folder).glob("[0-9][0-9]_*.ipynb"))}


def find_chapter(name, folder):
    """The notebook of `name`: its file stem (`03_nads`) or the stem without its number (`nads`)."""
    found = chapters(folder)
    for stem, path in found.items():
        if name in (stem, stem.split("_", 1)[1], stem + ".ipynb"):
            return path
    raise UsageError(f"unknown chapter {name!r}; accepted: {', '.join(found)}")


def parse_value(text):
    """A `-p` value as YAML (numbers, booleans, lists), falling back to the plain string."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def run_chapter(args):
    import papermill as pm

    from nadcore.device import resolve
    from nadcore.presets import check_scale

    folder = Path(args.book_dir) if args.book_dir else book_dir()
    notebook = find_chapter(args.chapter, folder)
    try:
        check_scale(args.scale)
        resolve(args.device)
    except ValueError as err:
        raise UsageError(str(err)) from None
    declared = pm.inspect_notebook(str(notebook))
    params = {"scale": args.scale, "device": args.device}
    for key, value in args.parameter:
        if key not in declared:
            raise UsageError(f"chapter {notebook.stem} has no parameter {key!r}; accepted: {', '.join(declared)}")
        params[key] = parse_value(value)
    out = Path(args.out) / f"{notebook.stem}-{args.scale}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    print(f"running {notebook.name} at scale {args.scale!r} on {args.device!r} -> {out}", file=sys.stderr)
    pm.execute_notebook(str(notebook), str(out), parameters=params, cwd=str(folder),
                        progress_bar=not args.no_progress, request_save_on_cell_execute=True)
    print(out)


def list_chapters(args):
    import papermill as pm

    folder = Path(args.book_dir) if args.book_dir else book_dir()
    for stem, path in chapters(folder).items():
        print(f"{stem:<26} parameters: {', '.join(pm.inspect_notebook(str(path)))}")


def estimate_nads(args):
    from nadcore import nads

    try:
        result = nads.estimate(args.arch, args.networks, method=args.method, step=args.step,
                               device=args.device, seed=args.seed, batch_size=args.batch_size)
    except ValueError as err:
        raise UsageError(str(err)) from None
    result.save(args.out)
    print(f"wrote {args.out}: {len(result.eigenvalues)} NADs of {args.arch} ({args.method}, {args.networks} networks)")


def parser():
    p = argparse.ArgumentParser(prog="nadcore", description="Neural Anisotropy Directions, reproduced.")
    p.add_argument("--version", action="version", version=f"nadcore {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="execute one chapter with papermill into an output folder")
    run.add_argument("chapter", help="the chapter's file stem, e.g. 03_nads (or nads)")
    run.add_argument("--scale", default="smoke", help="smoke (CPU, minutes), medium or paper (published settings)")
    run.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps")
    run.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"),
                     help="set a parameter the chapter declares (repeatable)")
    run.add_argument("--out", default="runs", help="output folder for the executed notebook (default: runs)")
    run.add_argument("--book-dir", help="folder holding the chapter notebooks (default: ./book)")
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    run.set_defaults(func=run_chapter)

    ls = sub.add_parser("chapters", help="list the chapters and the parameters each declares")
    ls.add_argument("--book-dir", help="folder holding the chapter notebooks (default: ./book)")
    ls.set_defaults(func=list_chapters)

    nad = sub.add_parser("nads", help="estimate the NADs of an architecture and save them to an .npz file")
    nad.add_argument("--arch", required=True, help="a registry name (see nadcore.models.names())")
    nad.add_argument("--networks", type=int, required=True, help="number of random networks (the paper: 10000)")
    nad.add_argument("--method", default="secant", help="secant (published, default), autograd or hessian")
    nad.add_argument("--step", type=float, default=100.0, help="secant step h (default 100, as published)")
    nad.add_argument("--seed", type=int, default=0)
    nad.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps")
    nad.add_argument("--batch-size", type=int, default=None, help="networks evaluated at once")
    nad.add_argument("--out", required=True, help="output FILE.npz (arrays eigenvalues, nads; settings record)")
    nad.set_defaults(func=estimate_nads)
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        args.func(args)
    except UsageError as err:
        print(f"nadcore: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
