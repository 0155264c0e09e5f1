"""Fashion-MNIST, the harder offline stand-in: read from Debian's dataset-fashion-mnist through
torchvision (`make test` installs the package as root; the tests that read it skip without it)."""

import dataclasses
import gzip

import numpy as np
import pytest
import torch
from torchvision.datasets import FashionMNIST

from nadcore import cifar

FILES = [f"{n}-ubyte" for n in ("train-images-idx3", "train-labels-idx1", "t10k-images-idx3", "t10k-labels-idx1")]
HAVE = all((cifar.FASHION_DEBIAN / f"{n}.gz").is_file() for n in FILES)
needs_package = pytest.mark.skipif(
    not HAVE, reason=f"Debian's dataset-fashion-mnist is not installed ({cifar.FASHION_DEBIAN}): "
                     "sudo apt-get install dataset-fashion-mnist, or make fashion as root")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="module")
def test_split(root):
    return cifar.load("fashion", root, train=False)


def _raw(name, offset, count):
    """`count` bytes of Debian's file `name` after its idx header, read without torchvision."""
    with gzip.open(cifar.FASHION_DEBIAN / f"{name}.gz") as f:
        return np.frombuffer(f.read(offset + count)[offset:], dtype=np.uint8)


@needs_package
def test_test_split(test_split):
    x, y = test_split
    assert x.shape == (10_000, 3, 32, 32) and x.dtype == torch.float32 and y.dtype == torch.int64
    assert x.min() == 0 and x.max() == 1 and x.is_contiguous()
    assert torch.equal(x[:, 0], x[:, 1]) and torch.equal(x[:, 0], x[:, 2])  # grey, copied to 3 channels
    border = torch.ones(32, 32, dtype=torch.bool)
    border[2:30, 2:30] = False
    assert x[:, :, border].abs().max() == 0  # padded with zeros, 2 px on each side
    first = _raw("t10k-images-idx3-ubyte", 16, 2 * 784).reshape(2, 28, 28) / 255.0
    np.testing.assert_allclose(x[:2, 0, 2:30, 2:30].numpy(), first, atol=1e-7)
    assert y.tolist()[:20] == _raw("t10k-labels-idx1-ubyte", 8, 20).tolist()
    assert torch.bincount(y).tolist() == [1000] * 10  # classes 0..9, balanced


@needs_package
def test_train_split_limit_and_stats(root, test_split):
    x, y = cifar.load("fashion", root, train=True)
    assert x.shape == (60_000, 3, 32, 32) and torch.bincount(y).tolist() == [6000] * 10
    xs, ys = cifar.load("fashion", root, train=True, limit=100)
    assert torch.equal(xs, x[:100]) and torch.equal(ys, y[:100])
    xt, yt = cifar.load("fashion", root, train=False, limit=7)
    assert torch.equal(xt, test_split[0][:7]) and xt.shape == (7, 3, 32, 32)
    assert cifar.stats("fashion", xs) == cifar.channel_stats(xs)
    with pytest.raises(ValueError, match="limit must be None or a positive int"):
        cifar.load("fashion", root, limit=0)


@needs_package
def test_files_are_copied_once_then_read_from_data_root(root, test_split, monkeypatch):
    raw = root / "FashionMNIST" / "raw"
    assert sorted(p.name for p in raw.iterdir()) == sorted(FILES)  # no temporary files left
    mtime = (raw / FILES[0]).stat().st_mtime_ns
    monkeypatch.setattr(cifar, "FASHION_DEBIAN", root / "no-package")  # torchvision's layout suffices
    x, _ = cifar.load("fashion", root, train=False, limit=3)
    assert torch.equal(x, test_split[0][:3]) and (raw / FILES[0]).stat().st_mtime_ns == mtime


def test_classes_and_names():
    assert cifar.DATASETS == ("cifar10", "digits", "fashion")
    assert cifar.classes("fashion") == tuple(FashionMNIST.classes) == cifar.FASHION_CLASSES
    assert cifar.classes("fashion")[0] == "T-shirt/top" and cifar.classes("fashion")[9] == "Ankle boot"


def test_missing_package_is_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.setattr(cifar, "FASHION_DEBIAN", tmp_path / "no-package")
    with pytest.raises(ValueError) as err:
        cifar.load("fashion", tmp_path / "empty", train=True)
    message = str(err.value)
    assert "\n" not in message and "name 'fashion'" in message and "data_root" in message
    assert "apt-get install dataset-fashion-mnist" in message and "download=True" in message
    assert not (tmp_path / "empty").exists()  # nothing written


def test_the_presets_name_fashion_among_their_datasets():
    from nadcore import presets

    assert presets.DATASETS == cifar.DATASETS          # spelt out in presets, which stay free of torchvision
    assert presets.fashion("cifar10").dataset == presets.fashion("ood").dataset == "fashion"
    assert presets.fashion("cifar10").recipe.epochs == 4 and presets.fashion("ood").limit == 10_000
    for typed in (presets.preset("cifar10", "smoke"), presets.preset("underspecification", "smoke").ood):
        assert dataclasses.replace(typed, dataset="fashion").dataset == "fashion"
        with pytest.raises(ValueError) as err:
            dataclasses.replace(typed, dataset="mnist")
        assert str(err.value) == "dataset must be one of cifar10, digits, fashion; got 'mnist'"
    with pytest.raises(ValueError, match="part must be one of cifar10, ood"):
        presets.fashion("pairs")


def test_chapter5_loads_fashion_and_names_the_dataset_when_wrong(tmp_path):
    from nadcore import presets
    from nadcore.experiments import ch5_underspec

    with pytest.raises(ValueError, match="^dataset must be one of cifar10, digits, fashion; got 'mnist'$"):
        ch5_underspec.load_images("mnist", tmp_path)
    with pytest.raises(ValueError, match="dataset must be one of cifar10, digits, fashion; got 'svhn'"):
        presets.Ood(archs=["mlp"], dataset="svhn", limit=None, indices=[0], seeds=[0], eps=1.0, sigma={"mlp": 1.0},
                    recipe={"mlp": presets.Sgd(epochs=1, max_lr=0.1)})   # refused before any work


@needs_package
def test_chapter5_reads_fashion_with_a_limit(root):
    from nadcore.experiments import ch5_underspec

    (x, y), (xt, yt) = ch5_underspec.load_images("fashion", root, limit=50)
    assert x.shape == xt.shape == (50, 3, 32, 32) and y.max() <= 9
    assert torch.equal(ch5_underspec.binarise(y), (y >= 5).long())   # T-shirt..Coat vs Sandal..Ankle boot


def test_old_processed_files_are_refused_before_torchvision_reads_them(tmp_path):
    """The adversarial pass of session 35: stray `processed/*.pt` files were loaded instead of the raw images (labels
    99 and -7), and a pickled one ended in torch's multi-line error."""
    from nadcore import cifar
    from nadcore.checks import InputError

    (tmp_path / "FashionMNIST" / "processed").mkdir(parents=True)
    (tmp_path / "FashionMNIST" / "processed" / "training.pt").write_bytes(b"not images")
    with pytest.raises(InputError, match="processed files"):
        cifar.load("fashion", tmp_path)
