"""The README and the book's page "Running the book" against the code they describe: the README stays
short, its library example calls the current API, and every command of the running page parses as
the `nadcore` command, the Makefile and the results bundle accept it."""

import ast
import contextlib
import importlib
import inspect
import io
import re
import shlex
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from nadcore import bundle, cli

README = ROOT / "README.md"
RUNNING = ROOT / "book" / "running.md"
MAX_README_LINES = 150


def blocks(path, language):
    """The fenced code blocks of `language` in `path`, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```", path.read_text(), flags=re.S | re.M)


def commands(path):
    """Each command of the page's bash blocks as a list of words: continuation lines joined, comments
    and `#SBATCH` lines dropped, the SLURM task id as 0."""
    found = []
    for block in blocks(path, "bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.replace('"$SLURM_ARRAY_TASK_ID"', "0")
            words = shlex.split(line, comments=True)
            if words:
                found.append(words)
    return found


def test_readme_is_short():
    lines = len(README.read_text().splitlines())
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines; the rest belongs on book/running.md"


def test_readme_names_the_make_targets_and_links_the_running_page_and_contributing():
    text = README.read_text()
    targets = set(re.findall(r"^([a-z]+):", (ROOT / "Makefile").read_text(), flags=re.M))
    named = {words[1] for words in commands(README) if words[0] == "make"}
    assert {"book", "test", "check"} <= named <= targets
    assert "book/running.md" in text and "CONTRIBUTING.md" in text


def test_every_promise_of_the_readme_names_tests_that_exist():
    """The README's "Promises the tests keep" name their tests as `tests/FILE.py::test_name` (later ones
    in a list as `::test_name`, of the same file): each exists."""
    text = README.read_text()
    promises = text[text.index("## Promises the tests keep"):]
    promises = promises[:promises.find("\n## ", 1) if "\n## " in promises[1:] else len(promises)]
    named, file = [], None
    for path, name in re.findall(r"`(?:(tests/\w+\.py))?::(\w+)`", promises):
        file = path or file
        named.append((file, name))
    assert len(named) >= 5 and all(f for f, _ in named)
    for path, name in named:
        source = (ROOT / path).read_text()
        assert re.search(rf"^def {name}\(", source, flags=re.M), f"README promises {path}::{name}, which does not exist"


def test_make_book_installs_what_the_pages_read_before_make_test_does():
    """Issue 41 item 0: the README's first command, `make book`, installs what the pages read (Chapters
    4-5 find their stored Fashion-MNIST results by the data's fingerprint), not only `make test`, so a
    fresh machine's book holds every figure of the committed one."""
    rules = dict(re.findall(r"^([a-z]+):([^#\n]*)", (ROOT / "Makefile").read_text(), flags=re.M))
    assert {"install", "fashion"} <= set(rules["book"].split())
    assert {"install", "fashion"} <= set(rules["test"].split())


def test_readme_example_calls_the_current_api():
    """Every `module.function(...)` of the example exists in nadcore and accepts the arguments given."""
    tree = ast.parse(blocks(README, "python")[0])
    modules = {a.asname or a.name: importlib.import_module(f"nadcore.{a.name}") for node in ast.walk(tree)
               if isinstance(node, ast.ImportFrom) and node.module == "nadcore" for a in node.names}
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and isinstance(node.func.value, ast.Name) and node.func.value.id in modules]
    assert len(calls) >= 4
    for call in calls:
        fn = getattr(modules[call.func.value.id], call.func.attr)
        positional = [a for a in call.args if not isinstance(a, ast.Starred)]
        kwargs = {k.arg: None for k in call.keywords}
        bind = inspect.signature(fn).bind_partial if len(positional) < len(call.args) else inspect.signature(fn).bind
        bind(*positional, **kwargs)


def exact_parser():
    """`nadcore`'s parser, taking options only as spelled in full (argparse accepts any prefix)."""
    parser = cli.parser()
    subcommands = parser._subparsers._group_actions[0].choices
    for p in (parser, *subcommands.values()):
        p.allow_abbrev = False
    return parser, set(subcommands)


def test_every_nadcore_command_on_the_running_page_parses():
    """Each `nadcore ...` line is accepted by the command's parser (options spelled in full, their
    types), and the page shows every subcommand."""
    parser, subcommands = exact_parser()
    seen = set()
    for words in commands(RUNNING):
        if words[0].endswith("nadcore"):
            with contextlib.redirect_stderr(io.StringIO()) as err:
                try:
                    parser.parse_args(words[1:])
                except SystemExit:
                    pytest.fail(f"{shlex.join(words)}: {err.getvalue().strip()}")
            seen.add(words[1])
    assert seen == subcommands


def test_make_bundle_and_workflow_commands_on_the_running_page_exist():
    targets = set(re.findall(r"^([a-z]+):", (ROOT / "Makefile").read_text(), flags=re.M))
    workflows = ROOT / ".github" / "workflows"
    for words in commands(RUNNING):
        if words[0] == "make":
            assert words[1] in targets, words
        elif words[:3] == ["python", "-m", "nadcore.bundle"]:
            assert words[3] in ("status", "all", *bundle.ITEMS), words
        elif words[:3] == ["gh", "workflow", "run"]:
            text = (workflows / words[3]).read_text()
            for field in words[5::2]:
                assert re.search(rf"^      {field.split('=')[0]}:", text, flags=re.M), words


def test_running_page_names_every_parameter_a_chapter_declares():
    text = RUNNING.read_text()
    declared = {name for path in sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb")) for name in cli.declared(path)}
    assert {name for name in declared if f"`{name}`" not in text} == set()


def test_running_page_shows_the_array_script_nadcore_submit_writes(tmp_path, monkeypatch):
    """The page's array script, its wrapped line joined, is what `nadcore submit --dry-run` prints, with
    the checkout at /home/me/nadbook."""
    page = next(b for b in blocks(RUNNING, "bash") if b.startswith("#!/bin/bash"))
    shown = page.replace("\\\n    ", "")
    monkeypatch.chdir(ROOT)
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert cli.main(["submit", "01_fourier", "--shards", "2", "--device", "cpu", "-p", "results_dir",
                         str(tmp_path), "--dry-run"]) == 0
    printed = out.getvalue().split("\n# ")[0].split("\n", 1)[1]
    printed = printed.replace(str(tmp_path), "/shared/r").replace(str(ROOT), "/home/me/nadbook")
    venv = Path(sys.executable).parent.parent
    printed = printed.replace(str(venv).replace(str(ROOT), "/home/me/nadbook"), "/home/me/nadbook/.venv")
    assert shown == printed
