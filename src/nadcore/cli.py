"""The `nadcore` command: run or plan a chapter with papermill at any scale, estimate NADs, list chapters,
make the results bundle."""

from __future__ import annotations

import argparse
import ast
import contextlib
import math
import os
import re
import signal
import stat
import sys
import threading
from collections.abc import Generator, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from nadcore import __version__, checks, extras, paths, prose
from nadcore.catalog import MAX_SEEDS
from nadcore.checks import InputError
from nadcore.seeds import MAX_SEED

if TYPE_CHECKING:
    import torch
    from jupyter_client import AsyncKernelManager

# Parameters the library reads, with the type their value must have; others take their default's type.
KINDS = {"scale": str, "device": str, "seed": int, "num_seeds": int, "shard": int, "num_shards": int,
         "progress": bool, "download": bool, "results_dir": str, "data_root": str}
WORDS = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}
LIMITS = {"seed": " in [0, 2^63) written in decimal", "num_seeds": f" in [1, {MAX_SEEDS}]", "num_shards": " >= 1",
          "shard": " in [0, num_shards)"}
PAGE_ONLY = "page-only"   # the tag of a chapter's cells that make its page only (the stored results at the
                         # published settings, the cost of the paper scale): a shard's run leaves them out
DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)")   # YAML would read 010 as 8 and 12:30 as 750
# What no value written into a script may hold: C0 and C1 controls and DEL (Cc), Unicode's format characters (Cf:
# bidirectional overrides, zero widths), line and paragraph separators (Zl, Zp: a newline to some readers), and the
# lone surrogates a file name's bytes that are not UTF-8 decode to (Cs)
SCRIPT_UNSAFE = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))


def script_unsafe(text: str) -> bool:
    """True when `text` holds a character of `SCRIPT_UNSAFE`'s categories (it may not be written into a script)."""
    import unicodedata

    return any(unicodedata.category(c) in SCRIPT_UNSAFE for c in text)
SBATCH_OWN = frozenset(("--output", "-o", "--error", "-e", "--input", "-i", "--chdir", "-D", "--array", "-a"))
MAX_NAME = 200         # bytes of a file name we write: its temporary name (`store.atomic_write`) adds up to 40
MAX_SHARDS = 10_000   # a SLURM array's tasks (clusters cap MaxArraySize near this)
RUN_HOURS = 10_000   # `nadcore run` asks for --yes past this planned duration (a year of one machine: a typo)
NAD_HOURS = 1   # `nadcore nads` asks for --yes past this estimated duration (priced before torch loads for the
                # registry's networks, timed on the first batch for a model of yours)


class UsageError(Exception):
    """A reader's mistake on the command line; printed as one line, exit status 2."""


class PathError(UsageError):
    """A path the command cannot use (a full disk, a name too long, a symlink loop, permissions);
    printed as one line naming the path, exit status 2."""


class RunFailed(Exception):
    """The chapter raised, or was interrupted, while it ran; printed as one line, exit status 1."""


def book_dir() -> Path:
    """The `book/` folder: beside the current directory if there is one, else beside the package."""
    for base in (Path.cwd(), Path(__file__).resolve().parents[2]):
        if (base / "book").is_dir() and any((base / "book").glob("[0-9][0-9]_*.ipynb")):
            return base / "book"
    raise UsageError("no book/ folder with chapters found; run nadcore from the nadbook checkout")


CHAPTER_STEM = re.compile(r"[0-9][0-9]_[A-Za-z0-9_.-]+")   # a chapter's file stem: nothing a shell or sbatch reads


def chapters(folder: str | Path) -> dict[str, Path]:
    """Chapter notebooks by file stem, in book order: those whose stem is plain (`CHAPTER_STEM`); a notebook named
    with spaces, quotes or `$(...)` is no chapter (its name would reach a job script)."""
    return {p.stem: p for p in sorted(Path(folder).glob("[0-9][0-9]_*.ipynb")) if CHAPTER_STEM.fullmatch(p.stem)}


def find_chapter(name: str, folder: str | Path) -> Path:
    """The notebook of `name`: its file stem (`03_nads`) or the stem without its number (`nads`)."""
    found = chapters(folder)
    for stem, path in found.items():
        if name in (stem, stem.split("_", 1)[1], stem + ".ipynb"):
            return path
    if not found:
        raise UsageError(f"--book-dir must be a folder holding chapter notebooks (NN_name.ipynb); {folder} holds none")
    raise UsageError(f"unknown chapter {name!r}; accepted: {', '.join(found)}")


MAX_VALUE = 10_000   # characters of a -p value, and nodes of what it reads as (a list or mapping, aliases expanded)


MAX_LINE = 2_000   # characters of an error's one line: a value echoed in it is cut


def one_line(err: BaseException) -> str:
    """`err`'s message on one line of at most `MAX_LINE` characters."""
    text = re.sub(r"\s*\n\s*", " ", str(err))
    return text if len(text) <= MAX_LINE else f"{text[:MAX_LINE - 40]}... ({len(text):,} characters)"


def parse_value(text: str, key: str = "parameter") -> Any:
    """A `-p` value as YAML (numbers, booleans, lists), falling back to the plain string; a mapping that gives a key
    twice, a value past `MAX_VALUE` characters or nodes, or nested past Python's recursion, is a UsageError
    naming `key`."""
    yaml = extras.require("yaml", "book", "nadcore run's -p values")

    class Strict(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            keys = [self.construct_object(k, deep=True) for k, _ in node.value]
            twice = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
            if twice is not None:
                raise UsageError(f"{key} must give each key once; got {twice!r} twice")
            return super().construct_mapping(node, deep)

    if len(text) > MAX_VALUE:
        raise fail(key, text, f"a value of at most {MAX_VALUE:,} characters")
    try:
        value = yaml.load(text, Loader=Strict)
    except yaml.YAMLError:
        return text
    except RecursionError:
        raise fail(key, text, "a value nested less deeply (lists or mappings within each other)") from None
    if _nodes(value, MAX_VALUE) > MAX_VALUE:
        raise fail(key, text, f"a value of at most {MAX_VALUE:,} elements (its aliases expanded)")
    return value


def _nodes(value: Any, budget: int) -> int:
    """The elements of `value` (lists and mappings walked, aliases as often as they are used), counted up to just
    past `budget`."""
    count, todo = 0, [value]
    while todo and count <= budget:
        v = todo.pop()
        count += 1
        if isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)
    return count


def declared(notebook: str | Path) -> dict[str, Any]:
    """`{name: default}` of the chapter's parameters cell, as papermill reads it (None: not a literal)."""
    pm = extras.require("papermill", "book", "nadcore run")
    out = {}
    try:
        found = pm.inspect_notebook(str(notebook))
    except Exception as err:   # noqa: BLE001 - not JSON, or JSON that is no notebook (nbformat's own kinds)
        raise UsageError(f"{notebook} is no readable notebook ({type(err).__name__}: "
                         f"{' '.join(str(err).split())[:120]})") from None
    for name, info in found.items():
        try:
            out[name] = ast.literal_eval(info["default"])
        except (ValueError, SyntaxError):
            out[name] = None
    return out


def fail(key: str, value: object, accepted: str | None = None) -> UsageError:
    """The one-line UsageError `KEY must be ...; got VALUE` (a long VALUE cut, its length said)."""
    shown = repr(value) if len(repr(value)) <= 80 else f"{repr(value)[:60]}... ({len(str(value)):,} characters)"
    return UsageError(f"{key} must be {accepted or WORDS[KINDS[key]] + LIMITS.get(key, '')}; got {shown}")


def typed(key: str, text: str, default: Any) -> Any:
    """The `-p` text of `key` as a value of the type the library (or the declared default) gives it."""
    kind = KINDS.get(key, type(default) if type(default) in WORDS else None)
    if kind is str:
        return text
    if kind is int and not DECIMAL.fullmatch(text.strip()):
        raise fail(key, text, WORDS[int] + LIMITS.get(key, " written in decimal"))
    value = parse_value(text, key)
    if kind is not None and not (type(value) is kind or (kind is float and type(value) is int)):
        raise fail(key, value, WORDS[kind] + LIMITS.get(key, ""))
    return float(value) if kind is float else value


def check_device(device: str | torch.device, present: bool = True) -> torch.device:
    """The `torch.device` of `device`; a UsageError unless it is accepted and (`present`) present on this
    machine; a plan (`present=False`) also takes "cuda" on a machine without a GPU (`plan.plan_device`)."""
    from nadcore.device import DeviceUnavailable, resolve

    try:
        return resolve(device)
    except ValueError as err:
        if not present and isinstance(device, str) and device.split(":")[0] in ("cuda", "mps"):
            import torch  # a plan of a GPU run, made before renting one (as `plan.plan_device`)

            with contextlib.suppress(RuntimeError):
                return torch.device(device)
        if not isinstance(err, DeviceUnavailable):
            raise UsageError(str(err)) from None
        raise fail("device", device, f'"auto", "cpu" or a device this machine has (here: {err.missing})') from None


def os_line(err: OSError) -> str:
    """An OSError as one line naming its path: `STRERROR: PATH`."""
    names = " -> ".join(str(f) for f in (err.filename, err.filename2) if f is not None)
    why = err.strerror or describe(err)
    return f"{why}: {names}" if names else why


def _stat(path):
    """`os.stat(path)` (symlinks followed), None where nothing is there; raises the other OSErrors
    (a name too long, a symlink loop, permissions)."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def check_folder(key: str, path: str | Path, writable: bool = True, given: str | Path | None = None) -> None:
    """A UsageError (about `given`, default `path`) unless `path` is a folder, or can be created as
    one, that we may write into (`writable`; else only read). A path part too long, a symlink loop or
    a broken symlink is refused here, not when the run first writes."""
    given = str(given if given is not None else path)
    if not str(path).strip() or not given.strip():
        raise fail(key, given, "a non-empty path")
    probe = Path(path)
    try:
        while (found := _stat(probe)) is None and probe != probe.parent:
            if os.path.islink(probe):
                raise fail(key, given, f"a path we can write to ({probe} is a broken symlink)")
            probe = probe.parent
    except OSError as err:
        raise fail(key, given, f"a path we can write to ({os_line(err)})") from None
    if found is None or not stat.S_ISDIR(found.st_mode):
        raise fail(key, given, f"a path we can write to ({probe} is not a folder)")
    if writable and not can_create_in(probe):
        raise fail(key, given, f"a path we can write to ({probe} is not writable)")


def can_create_in(folder: str | Path) -> bool:
    """True when a file can be created in `folder` (tried: `os.access` says yes to root everywhere)."""
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


CHAPTER_BUNDLE_DIR = "../bundle"   # the chapters' default bundle_dir (the checkout's bundle/ beside book/)


def check_values(values: Mapping[str, Any], folder: Path, writes: bool = True, force: bool = False,
                 here: bool | None = None, chapter: str | None = None) -> None:
    """A UsageError unless the library accepts every value the chapter will see (defaults included).

    `writes`: the chapter runs (not only planned), so the folders it writes into must be writable and
    lie outside the committed bundle unless `force`; `plan` only reads them. `here`: it runs on this machine, so
    its device must be present (default: `writes`; `submit` runs it on the cluster's nodes). `chapter`: the
    notebook's stem, whose presets alone its `overrides` may change."""
    from nadcore.presets import check_overrides, check_scale

    try:
        check_scale(values["scale"])
    except ValueError as err:
        raise UsageError(str(err)) from None
    check_device(values["device"], present=writes if here is None else here)
    for key, low in (("seed", 0), ("num_seeds", 1), ("num_shards", 1)):
        if isinstance(values.get(key), int) and values[key] < low:
            raise fail(key, values[key])
    if isinstance(values.get("seed"), int) and values["seed"] > MAX_SEED:
        raise fail("seed", values["seed"])
    if isinstance(values.get("num_seeds"), int) and values["num_seeds"] > MAX_SEEDS:
        raise fail("num_seeds", values["num_seeds"])
    for key in ("results_dir", "data_root"):
        if isinstance(values.get(key), str) and not values[key].strip():
            raise fail(key, values[key], "a non-empty path")
    shard, n = values.get("shard", 0), values.get("num_shards", 1)
    if isinstance(shard, int) and isinstance(n, int) and not 0 <= shard < n:
        raise fail("shard", shard, f"an integer in [0, {n}) (num_shards is {n})")
    if "overrides" in values:
        try:
            check_overrides(values["overrides"], values["scale"], chapter)
        except ValueError as err:
            raise UsageError(str(err)) from None
    bundle_dir = values.get("bundle_dir")   # the stored results a chapter reads; the default may be absent (a wheel)
    if isinstance(bundle_dir, str) and bundle_dir != CHAPTER_BUNDLE_DIR \
            and not (folder / bundle_dir / paths.BUNDLE_MARKER).is_file():
        raise fail("bundle_dir", bundle_dir, f"a results bundle (a folder holding {paths.BUNDLE_MARKER}, as the "
                                             "checkout's bundle/ does)")
    for key in ("results_dir", "data_root"):        # the chapter runs in `folder`
        if isinstance(values.get(key), str):
            writable = writes and (key == "results_dir" or values.get("download") is True)
            check_folder(key, folder / values[key], writable=writable)
            if writable:
                protect_bundle(key, folder / values[key], force, bundles=bundles(folder))


def _once(key, option, given, default):
    """The value of `--KEY` or `-p KEY` (both only when equal), else `default`."""
    if option is not None and key in given and given[key] != option:
        raise fail(key, given[key], f"given once: --{key} {option} and -p {key} differ")
    return given.get(key, default if option is None else option)


def bundles(folder: Path) -> tuple[Path, Path]:
    """The committed bundles a chapter run must not write into: the package's, and the one beside `folder`."""
    return BUNDLE, folder.parent / "bundle"


class Validated(NamedTuple):
    """A chapter run's checked arguments (`validate`)."""
    notebook: Path
    folder: Path
    params: dict[str, Any]
    values: dict[str, Any]


def validate(args: argparse.Namespace, writes: bool = True, here: bool | None = None) -> Validated:
    """Check the chapter and every parameter before any kernel starts.

    Returns `Validated(notebook, folder, params, values)`: the parameters papermill injects (`scale`,
    `device` and the `-p` ones) and every value the chapter will see (its declared defaults too).
    `-p scale` and `-p device` are the same as `--scale` and `--device`. `writes`: the chapter will
    run (`plan` only reads), so its results_dir must lie outside the bundle unless `args.force`; `here`: on this
    machine (`check_values`).
    """
    if args.book_dir is not None and not str(args.book_dir).strip():
        raise fail("--book-dir", args.book_dir, "a folder holding chapter notebooks (not blank)")
    folder = Path(args.book_dir) if args.book_dir else book_dir()
    notebook = find_chapter(args.chapter, folder)
    defaults = declared(notebook)
    given = {}
    for key, text in args.parameter:
        if key not in defaults:
            raise fail("parameter", key, f"one that {notebook.stem} declares ({', '.join(defaults)})")
        given[key] = typed(key, text, defaults[key])
    params = {**given, "scale": _once("scale", args.scale, given, "smoke"),
              "device": _once("device", args.device, given, "auto")}
    values = {**defaults, **params}
    check_values(values, folder, writes=writes, force=getattr(args, "force", False), here=here,
                 chapter=notebook.stem)
    return Validated(notebook, folder, params, values)


def chapter_plan(stem: str, values: Mapping[str, Any], folder: Path) -> Any:
    """`nadcore.plan.chapter_plan(...)` for these values (results_dir and bundle_dir relative to `folder`; the
    bundle beside the book folder when the chapter declares none and one is there)."""
    from nadcore.plan import chapter_plan

    results = os.path.abspath(folder / values.get("results_dir", "../results"))
    bundle = folder / values.get("bundle_dir", "../bundle")
    plan = chapter_plan(stem, values["scale"], seed=values.get("seed", 0), results_dir=results,
                        device=str(check_device(values["device"], present=False)),
                        num_seeds=values.get("num_seeds", 1), overrides=values.get("overrides"),
                        bundle_dir=os.path.relpath(bundle) if bundle.is_dir() else None)
    return plan


def planned(notebook: Path, folder: Path, values: Mapping[str, Any]) -> Any:
    """`chapter_plan` of the chapter; with overrides, a UsageError where its plan fails (the plan reads every preset
    through the chapter's own code: overrides that code refuses stop `run` and `submit` before a kernel starts)."""
    try:
        return chapter_plan(notebook.stem, values, folder)
    except Exception as err:
        if not values.get("overrides"):
            raise
        raise UsageError(f"overrides must give presets the chapter's code takes: the plan of {notebook.stem} "
                         f"fails with them ({describe(err)})") from None


def plan_chapter(args: argparse.Namespace) -> None:
    notebook, folder, _, values = validate(args, writes=False)
    try:
        print(chapter_plan(notebook.stem, values, folder).summary())
    except (ImportError, ValueError, TypeError, KeyError, IndexError) as err:
        said = "overrides must give presets the chapter's code takes" if values.get("overrides") else "no plan"
        detail = " ".join(str(err).split())[:200]
        raise UsageError(f"{said} for {notebook.stem}: "
                         + (detail if isinstance(err, ValueError) else f"{type(err).__name__}: {detail}")) from None


def output_stem(stem: str, values: Mapping[str, Any]) -> str:
    """`STEM-SCALE`, with `-shardIofN` when the run is one of N shards."""
    n = values.get("num_shards", 1)
    return f"{stem}-{values['scale']}" + (f"-shard{values['shard']}of{n}" if n != 1 else "")


def shard_notebook(notebook: Path, values: Mapping[str, Any]) -> Path | Any:
    """What papermill executes: `notebook`, or for one of several shards its cells without those tagged
    `PAGE_ONLY` (a shard's notebook is not a page; the collector, a run of one shard, makes the page)."""
    if values.get("num_shards", 1) == 1:
        return notebook
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    nb.cells = [c for c in nb.cells if PAGE_ONLY not in c.metadata.get("tags", [])]
    return nb


def describe(err: Any) -> str:
    """One line saying why a run stopped."""
    first = lambda text: (str(text).strip().splitlines() or [""])[0]
    if hasattr(err, "ename"):              # papermill.PapermillExecutionError
        return f"{err.ename}: {first(err.evalue)} (cell [{err.exec_count}])"
    return f"{type(err).__name__}: {first(err)}".rstrip(": ")


@contextlib.contextmanager
def sigterm_interrupts() -> Generator[threading.Event]:
    """SIGTERM (a batch system's time limit) and Ctrl-C raise KeyboardInterrupt, so the run is marked
    failed; yields an Event set when either came, so the kernel is then killed (`kernel_manager`)."""
    stopping = threading.Event()

    def stop(signum, frame):
        stopping.set()
        raise KeyboardInterrupt("terminated (SIGTERM)" if signum == signal.SIGTERM else "interrupted (Ctrl-C)")

    try:
        old = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    except ValueError:                     # not the main thread
        old = {}
    try:
        yield stopping
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def kernel_manager(stopping: threading.Event) -> type[AsyncKernelManager]:
    """The kernel manager papermill runs a chapter's kernel with: jupyter_client's, except that once
    `stopping` is set the kernel is killed, not asked to shut down: a kernel asked while it runs a cell
    prints a ~20-line ZMQError traceback (its sockets close before its reply is sent) after our one line."""
    from jupyter_client import AsyncKernelManager

    class KernelManager(AsyncKernelManager):
        async def shutdown_kernel(self, now=False, restart=False):   # ty: ignore[incompatible-mutable-override]
            return await super().shutdown_kernel(now=now or stopping.is_set(), restart=restart)

    return KernelManager


def bound_plan(plan: Any, stem: str, anyway: bool, note: str, verb: str) -> None:
    """A UsageError when `plan` would take over `RUN_HOURS` and `anyway` (the command line's --yes) is not given."""
    if plan.total_s > RUN_HOURS * 3600 and not anyway:
        raise UsageError(f"the plan of {stem} must take at most {RUN_HOURS:,} h: it takes "
                         f"~{prose.duration(plan.total_s)} on {plan.device} ({note}); a smaller scale, num_seeds or "
                         f"overrides, or --yes to {verb} it anyway")


def announce(notebook: Path, folder: Path, values: Mapping[str, Any], final: Path, running: Path,
             start_anyway: bool) -> None:
    """Print the chapter's plan and where its notebook goes to stderr. A plan blocks a run only where overrides do
    not resolve (the plan reads every preset through the chapter's own code) and where it would take over
    `RUN_HOURS` (unless `start_anyway`, the command line's --yes)."""
    try:
        plan = planned(notebook, folder, values)
    except UsageError:
        raise
    except Exception as err:
        print(f"nadcore: no plan for {notebook.stem} ({describe(err)})", file=sys.stderr)
    else:
        print(plan.summary(), file=sys.stderr)
        bound_plan(plan, notebook.stem, start_anyway, "see above", "start")
    print(f"running {notebook.name} at scale {values['scale']!r} on {values['device']!r} -> {final} "
          f"(named {running.name} until it succeeds)", file=sys.stderr)


def run_chapter(args: argparse.Namespace) -> None:
    """Execute into `NAME.RUNNING.ipynb`; rename it `NAME.ipynb` on success, `NAME-FAILED.ipynb` otherwise."""
    pm = extras.require("papermill", "book", "nadcore run")

    notebook, folder, params, values = validate(args)
    out = Path(args.out)
    check_folder("--out", out, given=args.out)
    protect_bundle("--out", out, args.force, bundles=bundles(folder))
    name = output_stem(notebook.stem, values)
    final, running, failed = (out / f"{name}{tail}.ipynb" for tail in ("", ".RUNNING", "-FAILED"))
    if final.is_dir():
        raise fail("--out", str(out), f"a folder without a folder named {final.name}")
    for f in (final, running, failed):   # a run replaces (or removes) only its own notebooks (a hard link too)
        if f.is_file() and not f.is_symlink() and not args.force and not _papermill_output(f):
            raise fail("--out", str(out), f"a folder whose {f.name} is a run's output (papermill's) or absent, or "
                                          "--force to replace it")
    check_plain_files("--out", (final, running, failed), args.force)
    announce(notebook, folder, values, final, running, args.yes)
    out.mkdir(parents=True, exist_ok=True)
    try:
        with sigterm_interrupts() as stopping:
            pm.execute_notebook(shard_notebook(notebook, values), str(running), parameters=params, cwd=str(folder),
                                progress_bar=not args.no_progress, request_save_on_cell_execute=True,
                                kernel_manager_class=kernel_manager(stopping))
    except (Exception, KeyboardInterrupt) as err:
        kept = running.replace(failed) if running.exists() else "none written"
        raise RunFailed(f"{notebook.stem} failed: {describe(err)}; notebook: {kept}") from None
    running.replace(final)
    failed.unlink(missing_ok=True)
    print(final)


SBATCH_HEAD = b"#!/bin/bash\n#SBATCH --job-name=nadbook-"   # how the scripts `submit` writes begin


def _papermill_output(path: Path) -> bool:
    """True when the notebook at `path` is one papermill executed (a run's output), not a file of the user's."""
    try:
        return '"papermill"' in path.read_text(errors="replace")
    except OSError:
        return False


def check_plain_files(key: str, files: Iterable[Path], force: bool) -> None:
    """A UsageError when one of `files` (what a command writes in its folder) is a symlink (it would write through
    it, into the bundle or anywhere) or lies in a results bundle without `force`."""
    for f in files:
        if f.is_symlink():
            raise fail(key, str(f.parent), f"a folder where {f.name} is no symlink (it would be written through it)")
        found = _stat(f)
        if found is not None and not stat.S_ISREG(found.st_mode) and not stat.S_ISDIR(found.st_mode):
            raise fail(key, str(f.parent), f"a folder where {f.name} is a plain file or nothing (a FIFO would block)")
        protect_bundle(key, f, force)
        if found is not None and stat.S_ISREG(found.st_mode) and found.st_nlink > 1:
            f.unlink()   # a hard link: written as a new file, never into the file it shares


def list_chapters(args: argparse.Namespace) -> None:
    folder = Path(args.book_dir) if args.book_dir else book_dir()
    found = chapters(folder) if folder.is_dir() else {}
    if not found:
        raise fail("--book-dir", str(folder), "a folder holding chapter notebooks (NN_name.ipynb)")
    for stem, path in found.items():
        print(f"{stem:<26} parameters: {', '.join(declared(path))}")


def check_npz(out: str | Path) -> None:
    """A UsageError unless `out` names an .npz file we can write (its folder may be created)."""
    given, out = str(out), Path(out)
    if not given.strip():
        raise fail("--out", given, "a non-empty FILE.npz path")
    try:
        found = _stat(out)
    except OSError as err:
        raise fail("--out", given, f"a path we can write to ({os_line(err)})") from None
    if found is not None and stat.S_ISDIR(found.st_mode):
        raise fail("--out", given, "a FILE.npz path (not a folder)")
    if out.suffix != ".npz" or (found is not None and not stat.S_ISREG(found.st_mode)):
        raise fail("--out", given, "a FILE.npz path (a regular file whose name ends in .npz)")
    if len(out.name.encode()) > MAX_NAME:    # its temporary file's name adds about 40 bytes to it
        raise fail("--out", given, f"a FILE.npz whose name has at most {MAX_NAME} bytes (its temporary file adds "
                                   "its own to it, under the file system's 255)")
    check_folder("--out", out.parent, given=out)


BUNDLE = paths.BUNDLE   # written by `python -m nadcore.bundle` only ($NADBOOK_BUNDLE, else the checkout's)


def protect_bundle(key: str, path: str | Path, force: bool, bundles: Iterable[str | Path] = (BUNDLE,)) -> None:
    """A UsageError when `path` (a file or folder, existing or not, `..` and symlinks resolved) lies in a
    committed results bundle (`paths.bundle_of`, or one of `bundles`) and `force` is false: the bundle is written by
    `python -m nadcore.bundle` only. With `force`, the store may write there (NADBOOK_WRITE_BUNDLE)."""
    target = os.path.realpath(path)
    inside = [paths.bundle_of(path)] + [b for b in {os.path.realpath(b) for b in bundles}
                                         if os.path.commonpath([target, b]) == b]
    bundle = next((b for b in inside if b is not None), None)
    if bundle is None:
        return
    if not force:
        raise fail(key, str(path), f"a path outside the committed bundle ({bundle}; python -m nadcore.bundle "
                   "writes it), or --force to replace its files")
    os.environ["NADBOOK_WRITE_BUNDLE"] = "1"   # the store (in this process and a chapter run's kernel) lets it


def nad_hours(arch: Any, method: str, networks: int) -> tuple[float | None, bool]:
    """`(hours, bound)`: the estimated hours of a NAD estimate on this machine's CPU (`catalog.NAD_S`)
    and whether they are a lower bound (the mixed Hessian: at least its exact gradient's cost), or
    `(None, False)` where no cost is measured."""
    from nadcore.catalog import NAD_S

    each = NAD_S.get((arch, method))
    if each is None and method == "hessian" and (arch, "autograd") in NAD_S:
        return NAD_S[(arch, "autograd")] * networks / 3600, True
    return (None, False) if each is None else (each * networks / 3600, False)


def check_nad_args(args: argparse.Namespace) -> None:
    """Every value of `nadcore nads` checked before torch loads (messages name the option), against
    `nadcore.catalog` (torch-free); only --device's presence on this machine is left to the library."""
    import math

    import numpy as np

    from nadcore import catalog

    if (args.arch is None) == (args.model is None):
        raise fail("--arch", args.arch, "given, or --model instead (one of the two): a registry name, or "
                   "--model module:callable / timm:NAME") if args.arch is None else \
            fail("--model", args.model, f"given alone (--arch {args.arch} is given too)")
    if args.arch is not None and args.arch not in catalog.ARCHS:
        raise fail("--arch", args.arch, f"one of {', '.join(catalog.ARCHS)}")
    if args.model is not None and not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.-]*", args.model):
        raise fail("--model", args.model, "module:callable (an importable class or factory) or timm:NAME")
    if args.name is not None and (args.arch is not None or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}",
                                                                           args.name)):
        raise fail("--name", args.name, "given with --model only" if args.arch is not None else
                   "a file-name-safe name of at most 100 characters (letters, digits, _ . + -)")
    args.input_shape = parse_shape(args.input_shape)
    if (args.arch is not None or str(args.model).startswith("timm:")) and len(args.input_shape) != 3:
        raise fail("--input-shape", ",".join(map(str, args.input_shape)),
                   "C,H,W (three integers) for a registry network or a timm model, such as 1,32,32")
    if args.method not in catalog.NAD_METHODS:
        raise fail("--method", args.method, f"one of {', '.join(catalog.NAD_METHODS)}")
    with np.errstate(over="ignore", under="ignore"):
        step32 = np.float32(args.step)
    if not (math.isfinite(args.step) and step32 > 0 and np.isfinite(step32)):
        raise fail("--step", args.step, "a finite number > 0 in float32 (the secant step h; published: 100)")
    if args.batch_size is not None and not 1 <= args.batch_size <= catalog.MAX_BATCH:
        raise fail("--batch-size", args.batch_size, f"an integer in [1, {catalog.MAX_BATCH}] (networks at once)")
    if args.out is None and args.results_dir is None:
        raise fail("--out", None, "a FILE.npz path, or --results-dir where the chapters look for NADs")
    if args.out is not None:
        check_npz(args.out)
        protect_bundle("--out", args.out, args.force)
        if os.path.lexists(args.out) and not args.force:
            raise fail("--out", args.out, "a path where no file is yet, or --force to replace it")
    if args.results_dir is not None:
        check_folder("--results-dir", args.results_dir)
        protect_bundle("--results-dir", args.results_dir, args.force)
    if not 0 <= args.seed <= MAX_SEED:
        raise fail("--seed", args.seed, "an integer in [0, 2^63)")
    if not 2 <= args.networks <= catalog.MAX_NETWORKS:
        raise fail("--networks", args.networks, f"an integer in [2, {catalog.MAX_NETWORKS}] (the covariance is "
                   "mean-centred)")
    if args.num_shards < 1:
        raise fail("--num-shards", args.num_shards, "an integer >= 1")
    if not 0 <= args.shard < args.num_shards:
        raise fail("--shard", args.shard, f"an integer in [0, {args.num_shards}) (--num-shards is {args.num_shards})")
    if args.num_shards > 1 and args.results_dir is None:
        raise fail("--results-dir", None, "the folder the shards share (set it with --num-shards > 1)")
    hours, bound = nad_hours(args.arch, args.method, args.networks)
    if hours is not None and hours > NAD_HOURS and not args.yes:
        raise fail("--networks", args.networks, f"what finishes within {NAD_HOURS} h here (this one: "
                   f"{'over ' if bound else ''}~{hours:.0f} h on a 2-core CPU), or pass --yes to start it anyway")
    if hours is None and args.networks > catalog.UNPRICED_NETWORKS and not args.yes:
        raise fail("--networks", args.networks, f"at most {catalog.UNPRICED_NETWORKS} for {args.arch or args.model} "
                   f"({args.method}), whose cost is not measured, or pass --yes to start it anyway")


def parse_shape(text: str) -> tuple[int, ...]:
    """`--input-shape C,H,W` as a tuple of positive ints (one to three of them)."""
    from nadcore.catalog import MAX_INPUT

    parts = str(text).replace(" ", "").split(",")
    if not 1 <= len(parts) <= 3 or not all(DECIMAL.fullmatch(p) and int(p) >= 1 for p in parts):
        raise fail("--input-shape", text, "C,H,W: up to three positive integers such as 3,32,32")
    if math.prod(int(p) for p in parts) > MAX_INPUT:
        raise fail("--input-shape", text, f"C,H,W of at most {MAX_INPUT:,} entries in all (the D x D covariance; "
                   "published: 1,32,32)")
    return tuple(int(p) for p in parts)


OPTIONS = {"model": "--model", "name": "--name", "input_shape": "--input-shape", "num_networks": "--networks",
           "batch_size": "--batch-size", "step": "--step", "method": "--method",
           "device": "--device"}   # the library's parameters, as the command line names them


def option_error(err: ValueError) -> UsageError:
    """A library ValueError as a UsageError: an `InputError` about a parameter of `OPTIONS` under the option's
    name, any other as it is."""
    if isinstance(err, InputError) and err.param in OPTIONS:
        return UsageError(OPTIONS[err.param] + str(err)[len(err.param):])
    return UsageError(str(err))


def estimate_nads(args: argparse.Namespace) -> None:
    """`nadcore nads`: chunks stored in --results-dir as they finish (a rerun resumes), the NADs
    under the name the chapters read (`nads.result_path`) and/or in --out; then how far to trust them."""
    check_nad_args(args)                   # before torch is even imported
    from nadcore import nads

    chunks = args.results_dir or Path(args.out).parent   # chunks are written as they finish: a rerun resumes
    try:
        model = args.arch
        if args.model is not None:       # imported (or timm's name checked) before any network is built
            model = nads.model_factory(args.model, args.input_shape)
        name = args.arch or args.name or model.default_name
        import warnings

        with warnings.catch_warnings():   # printed below with the result, as one line
            warnings.simplefilter("ignore", nads.NADTrustWarning)
            s = nads.EstimateSettings(args.method, args.step, args.seed, args.input_shape,
                                      batch_size=args.batch_size, num_networks=args.networks)
            result = nads.estimate(model, s, device=args.device, results_dir=chunks,
                                   progress="cost" if args.no_progress else True, shard=(args.shard, args.num_shards),
                                   name=None if args.arch else name, max_hours=None if args.yes else NAD_HOURS)
    except ValueError as err:
        raise option_error(err) from None
    except OSError as err:                 # a full disk, a folder gone: the finished chunks stay
        raise PathError(f"nads stopped: {os_line(err)}; finished chunks are kept in {Path(chunks) / 'nad_chunks'}") \
            from None
    except KeyboardInterrupt:
        raise
    except BaseException as err:           # a model of yours raising anything, SystemExit and its own kinds too
        if checks.out_of_memory(err):      # the machine's limit, not the model's fault
            raise UsageError(f"--batch-size must fit this machine's memory: the estimate ran out of it "
                             f"({' '.join(str(err).split())[:120]}); a smaller --batch-size (networks per batch), "
                             f"or a smaller model or --input-shape; finished chunks are kept in "
                             f"{Path(chunks) / 'nad_chunks'}") from None
        if args.model is None:             # the registry's networks: a bug of ours, with its traceback
            raise
        raise UsageError(f"--model failed while its networks' gradients were computed ({type(err).__name__}: "
                         f"{' '.join(str(err).split())[:200]}); finished chunks are kept in "
                         f"{Path(chunks) / 'nad_chunks'}") from None
    if result is None:
        print(f"shard {args.shard} of {args.num_shards}: its chunks are stored in {Path(chunks) / 'nad_chunks'}; "
              "the NADs are merged by the run that finds every chunk stored (rerun without --shard to merge)")
        return
    written = [nads.result_path(name, result.settings, args.results_dir)] if args.results_dir else []
    written += [Path(args.out)] if args.out else []
    for path in written:
        try:
            result.save(path)
        except ValueError as err:          # the store refuses it (a path through a symlink into the bundle)
            raise option_error(err) from None
        except OSError as err:             # a full disk: no temporary file is left, the chunks stay
            raise PathError(f"could not write {path} ({os_line(err)}); finished chunks are kept in "
                            f"{Path(chunks) / 'nad_chunks'} (a rerun only merges them)") from None
    print(f"wrote {', '.join(map(str, written))}: {len(result.eigenvalues)} NADs of {name} "
          f"({args.method}, {args.networks} networks)")
    trust = result.trust()
    print(trust.summary())
    if trust.available and not trust.leading_above_chance and trust.block is None and not trust.isotropic:
        print(f"nadcore: warning: the leading NADs of {name} are not above chance: use more --networks",
              file=sys.stderr)


SBATCH_FLAGS = frozenset("HhkOQsVvW")   # sbatch's short options that take no argument (they may be bundled: -vo x)


def sbatch_sets_own(word: str) -> bool:
    """True when the sbatch argument `word` sets one of `SBATCH_OWN`: a long option or the unambiguous start of one
    (sbatch reads --outp=x as --output), or a short one, alone or after flags that take no argument (-vo/x)."""
    if word.startswith("--"):
        name = word.split("=")[0]
        return len(name) > 2 and any(own.startswith(name) for own in SBATCH_OWN)
    if not word.startswith("-") or len(word) < 2:
        return False
    for letter in word[1:]:            # flags, then the first option with an argument takes the rest of the word
        if letter not in SBATCH_FLAGS:
            return f"-{letter}" in SBATCH_OWN
    return False


def sbatch_word(text: str) -> str:
    """`text` as one argument of an `#SBATCH` line: sbatch splits the line at whitespace, groups
    quoted text, reads a backslash as an escape and an unquoted # as a comment (Slurm's
    `_get_argument`), so such text is double-quoted with `\\` and `\"` escaped (the value only, after
    an option's `--name=`)."""
    if not re.search(r"[\s\"'\\#]", text):
        return text
    option = re.match(r"--[A-Za-z][\w-]*=", text)
    name, value = (option.group(), text[option.end():]) if option else ("", text)
    return name + '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def slurm_scripts(args: argparse.Namespace) -> tuple[str, str, str]:
    """`(array, collector, stem)`: the sbatch scripts of `nadcore submit`, every value checked as for `run`, and the
    stem they are written under (the chapter and the scale they run).

    The array job runs shard `$SLURM_ARRAY_TASK_ID` of `--shards` against the shared results_dir;
    the collector (submitted with `afterok` on the array) runs the chapter whole, finds every
    cell stored and draws the figures."""
    import shlex

    if not 1 <= args.shards <= MAX_SHARDS:
        raise fail("--shards", args.shards, f"an integer in [1, {MAX_SHARDS:,}] (a SLURM array's tasks)")
    for key, _ in args.parameter:
        if key in ("shard", "num_shards"):
            raise fail("parameter", key, "one that --shards does not set (shard and num_shards are set per task)")
    for key, text in (("--out", args.out), ("--sbatch", args.sbatch), ("--book-dir", args.book_dir),
                      *((k, v) for k, v in args.parameter)):
        if text is not None and script_unsafe(str(text)):
            raise fail(key, text, "a value without newlines, other control or format characters, or bytes that "
                                  "are not UTF-8 (it is written into a script)")
    notebook, folder, _, values = validate(args, here=False)   # the cluster's nodes run it: their device
    try:                                   # as `run` does: the plan reads every preset through the chapter's code
        plan = planned(notebook, folder, values)
    except UsageError:
        raise
    except Exception:                      # no plan: the runs say so themselves
        plan = None
    if plan is not None:
        bound_plan(plan, notebook.stem, args.yes, "all shards together", "submit")
    if not {"shard", "num_shards"} <= set(values):
        sharding = [s for s, p in chapters(folder).items() if {"shard", "num_shards"} <= set(declared(p))]
        raise fail("chapter", notebook.stem, f"a chapter that shards ({', '.join(sharding)})")
    check_folder("--out", args.out)
    protect_bundle("--out", args.out, args.force, bundles=bundles(folder))
    out = Path(args.out).resolve()
    for key, path in (("--out", out), ("--book-dir", folder.resolve())):   # as written: every symlink resolved
        if script_unsafe(str(path)):
            raise fail(key, str(path), "a folder whose real path has no newline, other control or format character, "
                                       "or byte that is not UTF-8 (it is written into a script)")
    nadcore = shlex.quote(str(Path(sys.executable).with_name("nadcore")))
    given = "".join(f" -p {k} {shlex.quote(v)}" for k, v in args.parameter if k not in ("scale", "device"))
    run = (f"{nadcore} run {shlex.quote(notebook.stem)} --scale {shlex.quote(values['scale'])} "
           f"--device {shlex.quote(str(values['device']))} --no-progress "
           f"--book-dir {shlex.quote(str(folder.resolve()))} "
           f"--out {shlex.quote(str(out))}{' --force' if args.force else ''} --yes{given}")
    try:
        words = shlex.split(args.sbatch or "")
    except ValueError as err:          # shlex: "No closing quotation", "No escaped character"
        raise fail("--sbatch", args.sbatch, f"sbatch options quoted as a shell would ({err})") from None
    for word in words:                 # a later #SBATCH line wins: these would move the logs or undo the array
        if sbatch_sets_own(word):
            raise fail("--sbatch", args.sbatch, f"options other than {', '.join(sorted(SBATCH_OWN))} (nadcore sets "
                                                "them: the logs go to --out, the array is --shards)")
    extra = "".join(f"#SBATCH {sbatch_word(a)}\n" for a in words)
    logs = str(out).replace("%", "%%")     # % starts one of sbatch's filename patterns (%j, %A); %% is a %
    head = lambda name, log: (f"#!/bin/bash\n#SBATCH --job-name=nadbook-{notebook.stem}-{name}\n"
                              f"#SBATCH {sbatch_word(f'--output={logs}/slurm-{log}.out')}\n{extra}")
    cd = f"cd {shlex.quote(str(folder.parent))}\n"
    array = (head("shards", "%A_%a") + f"#SBATCH --array=0-{args.shards - 1}\n" + cd
             + f'{run} -p shard "$SLURM_ARRAY_TASK_ID" -p num_shards {args.shards}\n')
    return array, head("collect", "%j") + cd + run + "\n", f"{notebook.stem}-{values['scale']}"


def submit(args: argparse.Namespace) -> None:
    """`nadcore submit`: write the array and collector scripts beside the runs, then `sbatch` them
    (the collector with `--dependency=afterok` on the array); `--dry-run` prints them only."""
    import shutil
    import subprocess

    array, collector, stem = slurm_scripts(args)   # stem: the chapter and the scale the scripts run
    out = Path(args.out)
    if args.dry_run:
        print(f"# {stem}-shards.sbatch\n{array}\n# {stem}-collect.sbatch\n{collector}", end="")
        return
    if shutil.which("sbatch") is None:
        raise UsageError("sbatch was not found: run nadcore submit on a SLURM login node (or use --dry-run)")
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{stem}-{part}.sbatch" for part in ("shards", "collect")]
    check_plain_files("--out", paths, args.force)
    foreign = [p.name for p in paths if p.is_file() and not p.read_bytes().startswith(SBATCH_HEAD)]
    if foreign and not args.force:
        raise fail("--out", str(out), f"a folder whose {' and '.join(foreign)} nadcore wrote (a resubmission "
                                      "rewrites its own scripts), or --force to replace them")
    from nadcore.store import atomic_write

    for path, text in zip(paths, (array, collector)):   # whole or not at all
        atomic_write(path, lambda f, text=text: f.write(text.encode()))
    sbatch = lambda *a: subprocess.run(["sbatch", "--parsable", *a], capture_output=True, text=True)
    done = sbatch(str(paths[0]))
    if done.returncode != 0:
        raise RunFailed(f"sbatch refused {paths[0]}: {' '.join(done.stderr.split())}")
    array_id = done.stdout.strip().split(";")[0]
    done = sbatch(f"--dependency=afterok:{array_id}", str(paths[1]))
    if done.returncode != 0:
        raise RunFailed(f"sbatch refused {paths[1]}: {' '.join(done.stderr.split())}")
    print(f"submitted array job {array_id} ({args.shards} shards) and collector {done.stdout.strip().split(';')[0]} "
          f"(afterok:{array_id}); scripts in {out}")


def chapter_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments `run` and `plan` share."""
    p.add_argument("chapter", help="the chapter's file stem, e.g. 03_nads (or nads)")
    p.add_argument("--scale", help="smoke (CPU, minutes; default), medium or paper (published settings)")
    p.add_argument("--device", help="auto (default), cpu, cuda, cuda:N or mps")
    p.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"),
                   help="set a parameter the chapter declares (repeatable; -p scale/device = --scale/--device)")
    p.add_argument("--book-dir", help="folder holding the chapter notebooks (default: ./book)")


class OneLineParser(argparse.ArgumentParser):
    """argparse, its mistakes told in one line (`nadcore: error: ...`, exit 2) without the usage block; `--help`
    shows the usage."""

    def error(self, message: str):
        hint = ""
        if message.startswith("argument --sbatch: expected one argument"):   # its value starts with a dash
            hint = '; write --sbatch="--partition=gpu ..." with its "="'
        self.exit(2, f"nadcore: error: {' '.join(message.split())}{hint} (see {self.prog} --help)\n")


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="nadcore", description="Neural Anisotropy Directions, reproduced.")
    p.add_argument("--version", action="version", version=f"nadcore {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="execute one chapter with papermill into an output folder")
    chapter_arguments(run)
    run.add_argument("--out", default="runs", help="output folder for the executed notebook (default: runs)")
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    run.add_argument("--force", action="store_true", help="write into the committed bundle/ (results_dir, --out)")
    run.add_argument("--yes", action="store_true", help=f"start a run planned to take over {RUN_HOURS:,} h")
    run.set_defaults(func=run_chapter)

    plan = sub.add_parser("plan", help="check a chapter's parameters and print what a run would compute")
    chapter_arguments(plan)
    plan.set_defaults(func=plan_chapter)

    slurm = sub.add_parser("submit", help="submit a chapter to SLURM: an array of shards, then a collecting job")
    chapter_arguments(slurm)
    slurm.add_argument("--shards", type=int, required=True, help="array tasks, each one shard of the chapter's grids")
    slurm.add_argument("--out", default="runs", help="folder of the scripts, logs and notebooks (default: runs)")
    slurm.add_argument("--sbatch", help='extra sbatch options for both jobs, e.g. "--partition=gpu --gres=gpu:1 '
                      '--time=24:00:00"')
    slurm.add_argument("--dry-run", action="store_true", help="print the two scripts, submit nothing")
    slurm.add_argument("--force", action="store_true", help="let the runs write into the committed bundle/")
    slurm.add_argument("--yes", action="store_true", help=f"submit a chapter planned to take over {RUN_HOURS:,} h "
                       "(each shard's run is told --yes: its plan counts the whole chapter)")
    slurm.set_defaults(func=submit)

    ls = sub.add_parser("chapters", help="list the chapters and the parameters each declares")
    ls.add_argument("--book-dir", help="folder holding the chapter notebooks (default: ./book)")
    ls.set_defaults(func=list_chapters)

    nad = sub.add_parser("nads", help="estimate the NADs of an architecture and save them to an .npz file")
    nad.add_argument("--arch", help="a registry name (see nadcore.models.names()); or --model")
    nad.add_argument("--model", help="your own network: module:callable (an importable class or zero-argument "
                     "factory; the current folder is on the path) or timm:NAME (any timm model, one output)")
    nad.add_argument("--input-shape", default="1,32,32", help="C,H,W of the input (default 1,32,32)")
    nad.add_argument("--name", help="the name --model's result is stored under (default: the callable's "
                     "qualified name, or NAME of timm:NAME)")
    nad.add_argument("--networks", type=int, required=True, help="number of random networks (the paper: 10000)")
    nad.add_argument("--method", default="secant", help="secant (published, default), autograd or hessian")
    nad.add_argument("--step", type=float, default=100.0, help="secant step h (default 100, as published)")
    nad.add_argument("--seed", type=int, default=0)
    nad.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps")
    nad.add_argument("--batch-size", type=int, default=None, help="networks evaluated at once")
    nad.add_argument("--out", help="output FILE.npz (arrays eigenvalues, nads; settings record); without "
                     "--results-dir, finished chunks go to nad_chunks/ beside it (a rerun resumes)")
    nad.add_argument("--results-dir", help="store chunks here as they finish (a rerun resumes) and the NADs under "
                     "the name the chapters read (their results_dir)")
    nad.add_argument("--yes", action="store_true", help=f"start an estimate expected to take over {NAD_HOURS} h")
    nad.add_argument("--force", action="store_true", help="replace an existing --out file, or a committed file of "
                     "bundle/")
    nad.add_argument("--no-progress", action="store_true", help="hide the progress bar (the cost line stays)")
    nad.add_argument("--shard", type=int, default=0, help="which chunks this run computes: shard::num-shards")
    nad.add_argument("--num-shards", type=int, default=1, help="split the chunks over this many runs sharing "
                     "--results-dir (an array job); the run that finds every chunk stored merges them")
    nad.set_defaults(func=estimate_nads)

    bun = sub.add_parser("bundle", help="the results bundle: what its items hold, or compute (or finish) them",
                         description="The results bundle (nadcore.bundle): `status [ITEM ...]` says what items hold "
                         "and what the rest costs, `all` or `ITEM ...` computes (or finishes) them, resumably.")
    bun.add_argument("items", nargs="*", metavar="status | all | ITEM",
                     help="status [ITEM ...], all, or items (`nadcore bundle status` lists them)")
    bun.add_argument("--bundle-dir", metavar="DIR",
                     help="the bundle folder (default: $NADBOOK_BUNDLE, else the checkout's bundle/)")
    bun.set_defaults(func=run_bundle)
    return p


def run_bundle(args: argparse.Namespace) -> int | str | None:
    """`nadcore bundle ...`: `nadcore.bundle.main` with the same arguments (torch loads only here)."""
    from nadcore import bundle

    return bundle.main([*args.items, *([f"--bundle-dir={args.bundle_dir}"] if args.bundle_dir is not None else [])],
                       prog="nadcore bundle")


def main(argv: Sequence[str] | None = None) -> int | str:
    args = parser().parse_args(argv)
    try:
        code = args.func(args)
    except (UsageError, extras.MissingExtra) as err:
        print(f"nadcore: error: {one_line(err)}", file=sys.stderr)
        return 2
    except RunFailed as err:
        print(f"nadcore: error: {err}", file=sys.stderr)
        return 1
    except OSError as err:                 # a path the checks could not foresee (permissions, a full disk)
        print(f"nadcore: error: {os_line(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("nadcore: interrupted; finished chunks and cells are kept in the results folder", file=sys.stderr)
        return 130
    return code or 0   # the exit status of `bundle`; the other commands return None


if __name__ == "__main__":
    sys.exit(main())
