import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from nadcore import __version__, store


def test_round_trip_keeps_arrays_and_record(tmp_path):
    path = tmp_path / "r.npz"
    settings = {"arch": "lenet", "grid": (1, 2), "seed": 3}
    store.save(path, {"acc": np.arange(4.0), "w": torch.ones(2, 2)}, settings, device="cpu", duration=1.5)
    result = store.load(path, settings)
    np.testing.assert_array_equal(result["acc"], np.arange(4.0))
    np.testing.assert_array_equal(result["w"], np.ones((2, 2), dtype=np.float32))
    assert result.record["settings"] == {"arch": "lenet", "grid": [1, 2], "seed": 3}
    assert result.record["seed"] == 3 and result.record["device"] == "cpu"
    assert result.record["nadcore_version"] == __version__ and result.record["duration_s"] == 1.5


def test_other_settings_are_refused(tmp_path):
    path = tmp_path / "r.npz"
    store.save(path, {"a": np.zeros(2)}, {"seed": 0})
    with pytest.raises(store.StoreError, match="other settings"):
        store.load(path, {"seed": 1})
    assert store.matches(path, {"seed": 0}) and not store.matches(path, {"seed": 1})


def test_truncated_file_names_the_file(tmp_path):
    path = tmp_path / "r.npz"
    store.save(path, {"a": np.random.default_rng(0).normal(size=1000)}, {"seed": 0})
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(store.StoreError, match="r.npz"):
        store.load(path)


def test_foreign_npz_is_refused(tmp_path):
    path = tmp_path / "foreign.npz"
    np.savez(path, a=np.zeros(3))
    with pytest.raises(store.StoreError, match="not a nadcore result"):
        store.load(path)


def test_array_that_differs_from_its_record_is_refused(tmp_path):
    path = tmp_path / "r.npz"
    store.save(path, {"a": np.zeros(3)}, {"seed": 0})
    with np.load(path) as data:
        record = data["__record__"]
    np.savez(path, a=np.zeros(2), __record__=record)
    with pytest.raises(store.StoreError, match="'a'"):
        store.load(path)


def test_arrays_the_record_does_not_list_are_refused(tmp_path):
    """Issue 58 item 13: an array in the file that its record does not list was returned unchecked, and a record
    listing no arrays (`"arrays": {}`) let any arrays through."""
    import json

    path = tmp_path / "r.npz"
    store.save(path, {"a": np.zeros(3)}, {"seed": 0})
    with np.load(path) as data:
        record, a = data["__record__"], data["a"]
    np.savez(path, a=a, b=np.ones(2), __record__=record)
    with pytest.raises(store.StoreError, match=r"its arrays differ from those its record lists \(not listed: \['b'\]"):
        store.load(path)
    empty = json.loads(record.tobytes().decode())
    empty["arrays"] = {}
    np.savez(path, a=np.ones(5), __record__=np.frombuffer(json.dumps(empty).encode(), np.uint8))
    with pytest.raises(store.StoreError, match=r"not listed: \['a'\]"):
        store.load(path)


def test_object_arrays_are_rejected(tmp_path):
    with pytest.raises(ValueError, match="object"):
        store.save(tmp_path / "r.npz", {"a": np.array([{}, 1], dtype=object)}, {})


def test_cached_computes_once_and_recomputes_on_new_settings(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return {"x": np.full(3, len(calls))}

    path = tmp_path / "c.npz"
    first = store.cached(path, {"n": 1}, compute)
    again = store.cached(path, {"n": 1}, compute)
    other = store.cached(path, {"n": 2}, compute)
    assert len(calls) == 2
    np.testing.assert_array_equal(first["x"], again["x"])
    assert other["x"][0] == 2 and other.record["duration_s"] is not None


def test_cached_does_not_hide_a_corrupt_file(tmp_path):
    path = tmp_path / "c.npz"
    path.write_bytes(b"garbage")
    with pytest.raises(store.StoreError, match="c.npz"):
        store.cached(path, {}, lambda: {"x": np.zeros(1)})


def test_write_is_atomic_no_temporary_left(tmp_path):
    store.save(tmp_path / "r.npz", {"a": np.zeros(1)}, {})
    assert [p.name for p in tmp_path.iterdir()] == ["r.npz"]
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "r.npz").stat().st_mode & 0o444 == 0o444 & ~umask, "results are ordinary readable files"


def test_key_is_stable_and_order_free():
    assert store.key({"a": 1, "b": (2, 3)}) == store.key({"b": [2, 3], "a": 1})
    assert store.key({"a": 1}) != store.key({"a": 2})


def test_weights_round_trip_with_weights_only(tmp_path):
    model = torch.nn.Linear(3, 2)
    path = tmp_path / "m.pt"
    store.save_weights(path, model.state_dict(), {"arch": "linear"})
    state, record = store.load_weights(path, {"arch": "linear"})
    torch.testing.assert_close(state["weight"], model.weight.detach())
    assert record["settings"] == {"arch": "linear"}
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(store.StoreError, match="m.pt"):
        store.load_weights(path)


def test_weights_are_checked_against_their_recorded_hashes(tmp_path):
    """Issue 58's leftover: a .pt file's tensors changed behind its record loaded as the stored weights."""
    path = tmp_path / "m.pt"
    store.save_weights(path, torch.nn.Linear(3, 2).state_dict(), {"arch": "linear"})
    payload = torch.load(path, weights_only=True)
    assert set(json.loads(payload["record"])["arrays"]) == {"weight", "bias"}
    payload["state_dict"]["bias"] = payload["state_dict"]["bias"] + 1
    torch.save(payload, path)
    with pytest.raises(store.StoreError, match=r"m\.pt is corrupted: tensor 'bias' does not match its recorded hash"):
        store.load_weights(path, {"arch": "linear"})
    payload["state_dict"]["extra"] = torch.zeros(1)
    torch.save(payload, path)
    with pytest.raises(store.StoreError, match="holds other tensors than its record lists"):
        store.load_weights(path, {"arch": "linear"})
    record = json.loads(payload["record"])
    del record["arrays"]                           # saved before the hashes: read as before
    torch.save({"state_dict": payload["state_dict"], "record": json.dumps(record)}, path)
    assert set(store.load_weights(path, {"arch": "linear"})[0]) == {"weight", "bias", "extra"}


def test_record_is_plain_json(tmp_path):
    path = tmp_path / "r.npz"
    store.save(path, {"a": np.zeros(1)}, {"seed": np.int64(4)})
    with np.load(path, allow_pickle=False) as data:
        record = json.loads(data["__record__"].tobytes())
    assert record["settings"] == {"seed": 4}


def test_fingerprint_names_content_not_type():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert store.fingerprint(a) == store.fingerprint(torch.from_numpy(a))
    assert store.fingerprint(a) != store.fingerprint(a + 1)
    assert store.fingerprint(a, a) != store.fingerprint(a)


def test_records_name_the_code_that_made_them(tmp_path):
    import re

    record = store.save(tmp_path / "r.npz", {"a": np.zeros(2)}, {"seed": 1}, device="cpu").record
    in_git = (Path(__file__).parents[1] / ".git").exists()
    assert record["commit"] == store.commit() and (not in_git or re.fullmatch(r"[0-9a-f]{40}(\+dirty)?",
                                                                           record["commit"]))
    assert record["machine"] and record["device"] == "cpu"


def test_amend_record_fills_missing_fields_only(tmp_path):
    path = tmp_path / "r.npz"
    store.save(path, {"a": np.arange(3.0)}, {"seed": 1})
    record = store.amend_record(path, "device from the bundle's MACHINE.json", device="cpu")
    again = store.load(path, {"seed": 1})
    assert again.record == record and record["device"] == "cpu" and record["amended"].startswith("device")
    np.testing.assert_array_equal(again["a"], np.arange(3.0))
    with pytest.raises(ValueError, match="only fills missing fields"):
        store.amend_record(path, "again", device="cuda")


def _rewrite_record(path, change):
    """Write `path` again with its record changed by `change(record)` (arrays untouched)."""
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files if k != "__record__"}
        record = json.loads(data["__record__"].tobytes().decode())
    record = change(record)
    blob = np.frombuffer(json.dumps(record).encode(), dtype=np.uint8)
    np.savez(path, **arrays, __record__=blob)


@pytest.mark.parametrize("change", [
    lambda r: {**r, "arrays": "a"}, lambda r: {**r, "arrays": ["a"]}, lambda r: {**r, "arrays": 3},
    lambda r: {**r, "arrays": None}, lambda r: {**r, "arrays": {"a": "float64"}},
    lambda r: {**r, "arrays": {"a": ["shape", "dtype"]}}, lambda r: {**r, "arrays": {"a": {"dtype": "float64"}}},
    lambda r: {**r, "arrays": {"a": {"shape": [3]}}}, lambda r: {k: v for k, v in r.items() if k != "settings"},
    lambda r: {k: v for k, v in r.items() if k != "arrays"},
], ids=["str", "list", "int", "null", "meta-str", "meta-list", "no-shape", "no-dtype", "no-settings", "no-arrays"])
def test_every_malformed_record_is_a_store_error(tmp_path, change):
    """Issue 41 item 9: a record whose "arrays" is a string or a list (or whose parts are missing) raised
    TypeError/AttributeError/KeyError, which `matches` and the sweeps do not catch."""
    path = tmp_path / "r.npz"
    store.save(path, {"a": np.zeros(3)}, {"seed": 0})
    _rewrite_record(path, change)
    with pytest.raises(store.StoreError, match="r.npz"):
        store.load(path, {"seed": 0})
    with pytest.raises(store.StoreError, match="r.npz"):
        store.load(path)
    assert not store.matches(path, {"seed": 0})


@pytest.mark.parametrize("payload", [
    lambda p: {**p, "record": json.dumps([1, 2])}, lambda p: {**p, "state_dict": [1, 2]},
    lambda p: {**p, "record": json.dumps({**json.loads(p["record"]), "settings": None} | {"format": 1})},
    lambda p: {"record": json.dumps({k: v for k, v in json.loads(p["record"]).items() if k != "settings"}),
               "state_dict": p["state_dict"]},
], ids=["record-list", "state-list", "format", "no-settings"])
def test_every_malformed_weights_record_is_a_store_error(tmp_path, payload):
    path = tmp_path / "m.pt"
    store.save_weights(path, torch.nn.Linear(3, 2).state_dict(), {"arch": "linear"})
    torch.save(payload(torch.load(path, weights_only=True)), path)
    with pytest.raises(store.StoreError, match="m.pt"):
        store.load_weights(path, {"arch": "linear"})


def _rebuild(path, change_arrays=lambda a: a, change_record=lambda r: r):
    """Write `path` again as a plain npz: its arrays changed by `change_arrays`, its record by `change_record`."""
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files if k != "__record__"}
        record = json.loads(data["__record__"].tobytes().decode())
    blob = np.frombuffer(json.dumps(change_record(record)).encode(), dtype=np.uint8)
    np.savez(path, **change_arrays(arrays), __record__=blob)


def test_records_hold_a_content_hash_of_each_array(tmp_path):
    path = tmp_path / "r.npz"
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    record = store.save(path, {"a": a, "t": torch.ones(2)}, {"seed": 0}).record
    assert record["arrays"]["a"] == {"shape": [2, 3], "dtype": "float32", "sha256": store.content_hash(a)}
    assert store.content_hash(a) != store.content_hash(a.reshape(3, 2))          # shape counts
    assert store.content_hash(a) != store.content_hash(a.view(np.int32))         # dtype counts
    assert store.content_hash(a) == store.content_hash(np.asfortranarray(a))     # layout does not
    assert store.load(path, {"seed": 0}).record == record


@pytest.mark.parametrize("edit", [lambda a: a + 1, lambda a: a[::-1].copy(), lambda a: a.astype(np.float32) * 0])
def test_rebuilt_npz_with_other_values_under_its_record_is_refused(tmp_path, edit):
    """Issue 41 ("Also"): an .npz rebuilt with other array values under its original record loaded
    silently (shape and dtype kept, so the old checks passed)."""
    path = tmp_path / "r.npz"
    store.save(path, {"a": np.arange(1.0, 5.0), "b": np.zeros(2)}, {"seed": 0})
    _rebuild(path, lambda arrays: {**arrays, "a": edit(arrays["a"]).astype(np.float64)})
    with pytest.raises(store.StoreError, match=r"r\.npz: array 'a' does not match the content hash.*delete it"):
        store.load(path, {"seed": 0})
    assert not store.matches(path, {"seed": 0})


def test_files_without_hashes_still_load_and_can_be_given_them(tmp_path):
    path = tmp_path / "r.npz"
    a = np.linspace(0, 1, 7).astype(np.float16)
    store.save(path, {"a": a, "b": np.arange(3)}, {"seed": 2}, device="cpu")
    unhash = lambda r: {**r, "arrays": {k: {"shape": m["shape"], "dtype": m["dtype"]} for k, m in r["arrays"].items()}}
    _rebuild(path, change_record=unhash)
    old = store.load(path, {"seed": 2})                       # written before the hash existed: loads
    assert "sha256" not in old.record["arrays"]["a"]
    record = store.add_content_hash(path, "content hashes added")
    new = store.load(path, {"seed": 2})
    assert new.record == record and record["hashed"] == "content hashes added"
    assert {k: v for k, v in record.items() if k not in ("arrays", "hashed")} == \
        {k: v for k, v in old.record.items() if k != "arrays"}                # settings and the rest unchanged
    assert record["arrays"]["a"]["sha256"] == store.content_hash(a)
    for k in ("a", "b"):
        assert new[k].dtype == old[k].dtype and new[k].tobytes() == old[k].tobytes()
    assert store.add_content_hash(path) is None               # already hashed: not rewritten
    _rebuild(path, lambda arrays: {**arrays, "b": arrays["b"] + 1})
    with pytest.raises(store.StoreError, match="'b' does not match the content hash"):
        store.load(path)


def test_a_hash_that_is_not_a_string_is_a_malformed_record(tmp_path):
    path = tmp_path / "r.npz"
    store.save(path, {"a": np.zeros(3)}, {"seed": 0})
    _rebuild(path, change_record=lambda r: {**r, "arrays": {"a": {**r["arrays"]["a"], "sha256": 5}}})
    with pytest.raises(store.StoreError, match="malformed record"):
        store.load(path)


def test_a_record_names_the_versions_of_the_libraries_that_decide_it(tmp_path):
    """torch always; timm where the settings name a network built from timm's classes, at any depth
    (a sweep cell's inner settings); the key stays the settings' alone."""
    import timm

    torch_version = torch.__version__.split("+")[0]
    assert store.make_record({"arch": "lenet", "n": 3})["versions"] == {"torch": torch_version}
    cell = {"cell": {"index": 0}, "settings": {"arch": "vit", "n": 3}}
    assert store.make_record(cell)["versions"] == {"torch": torch_version, "timm": timm.__version__}
    assert store.library_versions({"archs": ["lenet", "mixer"]})["timm"] == timm.__version__
    assert store.library_versions({"arch": "not-a-network"}) == {"torch": torch_version}
    by_source = {"arch": "mynet", "model": {"source": "timm:resnet18", "parameters": 10}}      # nads.estimate's
    assert store.library_versions(by_source) == {"torch": torch_version, "timm": timm.__version__}
    own = {"model": {"source": "my_local_module:build"}, "other": {"model": {"source": "numpy.random:default_rng"}}}
    assert store.library_versions(own) == {"torch": torch_version, "numpy": np.__version__}   # no own module's
    res = store.save(tmp_path / "r.npz", {"a": np.zeros(2)}, cell)
    assert store.load(tmp_path / "r.npz").record["versions"] == res.record["versions"]
    assert store.key(res.record["settings"]) == store.key(cell)                 # not part of the key


@pytest.mark.parametrize("arrays", [
    (np.arange(12.0).reshape(3, 4)[:, ::2],), (torch.arange(6).reshape(2, 3).t(),), (np.array(3.5),),
    (np.zeros((0, 4)),), (np.array([True, False]), np.float16([1, 2])), ([1, 2, 3],)],
    ids=["strided", "transposed tensor", "0-d", "empty", "two arrays", "list"])
def test_fingerprint_hashes_the_c_ordered_bytes_of_each_array(arrays):
    """A record's data fingerprint is the sha256 of each array's C-ordered bytes, in order (keys must not move)."""
    import hashlib
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a.numpy() if torch.is_tensor(a) else np.asarray(a)).tobytes())
    assert store.fingerprint(*arrays) == h.hexdigest()[:16]


@pytest.mark.filterwarnings("ignore:Duplicate name:UserWarning")   # the zip written with an entry twice, on purpose
def test_a_file_that_two_readers_could_read_apart_or_that_claims_more_than_it_holds_is_refused(tmp_path):
    """The second adversarial pass (issue 58): a record with a key twice, a zip with an entry twice, a record entry
    that is no `.npy`, a header declaring 80 GB (numpy would allocate it) and a FIFO (which hung `plan`): each a
    StoreError naming the file, or nothing stored, never a traceback or a hang."""
    import json
    import os
    import zipfile

    from nadcore import plan

    good = tmp_path / "good.npz"
    store.save(good, {"a": np.zeros(3)}, {"seed": 0})
    with np.load(good) as data:
        record = data["__record__"].tobytes().decode()
    twice = tmp_path / "twice.npz"
    np.savez(twice, a=np.zeros(3), __record__=np.frombuffer(record.replace('"settings"', '"settings": {}, "settings"',
                                                                             1).encode(), np.uint8))
    dup = tmp_path / "dup.npz"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(dup, "w") as out:
        for info in src.infolist():
            out.writestr(info.filename, src.read(info))
        out.writestr("a.npy", src.read("a.npy"))
    raw = tmp_path / "raw.npz"
    with zipfile.ZipFile(raw, "w") as out:
        out.writestr("__record__.npy", record.encode())
    huge = tmp_path / "huge.npz"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(huge, "w") as out:
        header = src.read("a.npy").replace(b"(3,)", b"(10000000000,)")
        out.writestr("a.npy", header)
        out.writestr("__record__.npy", src.read("__record__.npy"))
    for path, message in ((twice, "a key given twice"), (dup, "holds an entry twice"), (raw, "unreadable"),
                          (huge, "declares")):
        with pytest.raises(store.StoreError, match=message):
            store.load(path)
    fifo = tmp_path / "nads" / "lenet_fifo.npz"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    assert plan._record(fifo) is None and plan.other_estimates("lenet", {"arch": "lenet"}, [tmp_path]) == []
    assert json.loads(record)["settings"] == {"seed": 0}


def test_a_temporary_file_goes_where_the_file_goes_every_symlink_resolved(tmp_path, monkeypatch):
    """Third adversarial pass of issue 58: the temporary file of `deep/b2/../b2/nads/x.npz`, b2 a symlink into a
    bundle, went where `..` collapses as text (into the bundle), the file where the kernel resolves it."""
    from nadcore import paths

    bundle = tmp_path / "fakeb"
    (bundle / "nads").mkdir(parents=True)
    (bundle / paths.BUNDLE_MARKER).touch()
    (tmp_path / "bl").symlink_to(bundle)
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "b2").symlink_to("../bl")
    temporaries = []
    real_replace = store.os.replace
    monkeypatch.setattr(store.os, "replace", lambda a, b: (temporaries.append(str(a)), real_replace(a, b))[1])
    store.save(tmp_path / "deep" / "b2" / ".." / "b2" / "nads" / "x.npz", {"a": np.zeros(3)}, {"x": 1})
    assert temporaries and not any(str(bundle) in t for t in temporaries)
    assert (tmp_path / "b2" / "nads" / "x.npz").is_file() and not list((bundle / "nads").iterdir())
