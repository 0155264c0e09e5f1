import pytest
import torch

from nadcore import presets
from nadcore.device import resolve


def test_auto_and_cpu_resolve():
    assert resolve("cpu") == torch.device("cpu")
    assert resolve("auto").type in ("cpu", "cuda", "mps")


@pytest.mark.parametrize("bad", ["gpu", "tpu", 3, ""])
def test_bad_device_names_the_accepted_values(bad):
    with pytest.raises(ValueError, match="auto"):
        resolve(bad)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_unavailable_cuda_is_refused():
    with pytest.raises(ValueError, match="not available"):
        resolve("cuda")


def test_every_chapter_has_every_scale():
    for chapter, scales in presets.PRESETS.items():
        assert set(scales) == set(presets.SCALES), chapter


def test_preset_is_a_copy_and_bad_names_are_refused():
    a = presets.preset("fourier", "smoke")
    a["tampered"] = True
    assert "tampered" not in presets.preset("fourier", "smoke")
    with pytest.raises(ValueError, match="smoke, medium, paper"):
        presets.preset("fourier", "huge")
    with pytest.raises(ValueError, match="chapter must be one of"):
        presets.preset("nope", "smoke")
