"""nadcore.checks, the one validation module, and the exception classes that replaced message parsing."""

import numpy as np
import pytest

from nadcore import checks, cli, device, store


def test_integer_takes_ints_in_range_and_names_the_parameter_otherwise():
    assert checks.integer("n", np.int64(3), 1, 5) == 3 and type(checks.integer("n", np.int64(3), 1, 5)) is int
    assert checks.integer("n", None, 1, optional=True) is None
    for bad in (True, 0, 2.0, None):
        with pytest.raises(checks.InputError, match=f"^n must be an integer >= 1; got {bad!r}$") as err:
            checks.integer("n", bad, 1)
        assert err.value.param == "n" and isinstance(err.value, ValueError)
    with pytest.raises(checks.InputError, match=r"^k must be an integer in \[1, 4\]; got 5$"):
        checks.integer("k", 5, 1, 4)
    with pytest.raises(checks.InputError, match=r"^k must be a few; got 5$"):
        checks.integer("k", 5, 1, 4, accepted="a few")


def test_one_of_and_the_message_begins_with_the_parameter():
    assert checks.one_of("method", "secant", ("secant", "autograd")) == "secant"
    with pytest.raises(checks.InputError, match=r"^method must be one of 'secant', 'autograd'; got \['secant'\]$"):
        checks.one_of("method", ["secant"], ("secant", "autograd"))   # unhashable: refused, not a TypeError
    assert checks.InputError("r (the replicate) must be >= 0; got -1").param == "r"   # the name it begins with
    with pytest.raises(ValueError, match="must begin with its parameter's name"):
        checks.InputError("(a replicate) must be >= 0")


def test_a_missing_device_says_what_is_missing_and_the_cli_reads_it():
    if device.torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    with pytest.raises(device.DeviceUnavailable) as err:
        device.resolve("cuda")
    assert err.value.param == "device" and err.value.missing == "no CUDA GPU"
    with pytest.raises(cli.UsageError, match=r"a device this machine has \(here: no CUDA GPU\)"):
        cli.check_device("cuda")


def test_the_cli_names_the_option_of_a_library_input_error():
    assert str(cli.option_error(checks.InputError("input_shape must be (C, H, W); got 3"))) == \
        "--input-shape must be (C, H, W); got 3"
    assert str(cli.option_error(checks.InputError("step must be > 0; got 0"))) == "--step must be > 0; got 0"
    assert str(cli.option_error(checks.InputError("sigma must be > 0; got 0"))) == "sigma must be > 0; got 0"
    assert str(cli.option_error(ValueError("model must be nice"))) == "model must be nice"   # not an InputError


def test_cached_recomputes_a_result_of_other_settings_only_and_watched_notes_what_load_reads(tmp_path):
    path = tmp_path / "r.npz"
    store.save(path, {"a": np.zeros(2)}, {"x": 1})
    with pytest.raises(store.OtherSettings):
        store.load(path, {"x": 2})
    with store.watched() as seen:
        again = store.cached(path, {"x": 2}, lambda: {"a": np.ones(2)})   # other settings: recomputed
        assert seen == {} and again.arrays["a"].tolist() == [1, 1]
        store.load(path)
    assert seen == {path.resolve(): again.record}
    path.write_bytes(b"not a zip")
    with pytest.raises(store.StoreError) as err:                       # unreadable: reported, never recomputed
        store.cached(path, {"x": 2}, lambda: {"a": np.ones(2)})
    assert not isinstance(err.value, store.OtherSettings)
