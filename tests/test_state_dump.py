"""`tools/state_dump.py`: what the book stores and glues, dumped and diffed (issue 59: a refactor moves nothing)."""

import json
import sys
from pathlib import Path

import numpy as np

from nadcore import store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import state_dump  # noqa: E402


def test_the_dump_holds_keys_hashes_and_glued_values_and_the_diff_names_what_moved(tmp_path, capsys):
    bundle, book = tmp_path / "bundle", tmp_path / "book"
    book.mkdir()
    store.save(bundle / "nads" / "a.npz", {"x": np.arange(3.0)}, {"arch": "lenet"})
    glue = {"output_type": "display_data", "data": {"application/papermill.record/text/plain": "0.5"},
            "metadata": {"scrapbook": {"name": "share", "mime_prefix": "application/papermill.record/"}}}
    (book / "01_a.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "outputs": [glue]}]}))
    before = tmp_path / "before.json"
    assert state_dump.main(["--bundle", str(bundle), "--book", str(book)]) == 0
    before.write_text(capsys.readouterr().out)
    dump = json.loads(before.read_text())
    assert dump["glued"] == {"01_a": {"share": "0.5"}}
    assert dump["stored"]["nads/a.npz"]["key"] == store.key({"arch": "lenet"})
    assert dump["stored"]["nads/a.npz"]["arrays"]["x"] == store.content_hash(np.arange(3.0))
    store.save(bundle / "nads" / "a.npz", {"x": np.arange(3.0) + 1}, {"arch": "lenet"})   # the numbers moved
    after = tmp_path / "after.json"
    state_dump.main(["--bundle", str(bundle), "--book", str(book)])
    after.write_text(capsys.readouterr().out)
    assert state_dump.main(["--diff", str(before), str(after)]) == 1
    assert capsys.readouterr().out.startswith("~ stored/nads/a.npz/arrays/x: ")
    assert state_dump.main(["--diff", str(before), str(before)]) == 0
