"""A stored number is the number: alone, in any batch, in any shard, after a kill and a restart.

Bitwise equality holds on one device with one thread count (the kernels' rounding depends on
both); these tests run everything in one process, or in subprocesses with the same threads.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import estimate_kw

from nadcore import data, fourier, models, nads, store, sweeps, train
from nadcore.experiments import ch1_fourier

SETTINGS = dict(n=192, sigma=0.75, eps=1.0, kind="sin", epochs=1, max_lr=0.5, momentum=0.0, weight_decay=0.0,
                batch_size=64, normalize=False, size=32, seed=3, device="cpu")
GRID = fourier.Grid((-8, 0, 8))                                  # 5 canonical cells


def lenet_runs(seeds, pooling, n=256):
    """Train one LeNet per seed with fit_many on `n` samples; return their loss histories."""
    v = fourier.fourier_direction(-8, 8)
    datasets, nets = [], []
    for s in seeds:
        datasets.append((data.directional_dataset(v, n, 0.75, 1.0, seed=2 * s),
                         data.directional_dataset(v, n, 0.75, 1.0, seed=2 * s + 1)))
        torch.manual_seed(s)
        nets.append(models.build("lenet", pooling=pooling))
    out = train.fit_many(nets, datasets, train.Recipe(epochs=1, max_lr=0.5, batch_size=64), seeds=seeds, device="cpu")
    return [np.concatenate([o.loss_history, [o.test_acc, o.train_acc]]) for o in out]


@pytest.mark.parametrize("n", [pytest.param(256, marks=pytest.mark.slow), 200])   # 256: make test only
def test_fit_many_network_is_the_same_alone_or_in_any_batch(n):
    # Unpadded stacks of 1 and 3 LeNets without pooling rounded differently (6e-8 per step). With
    # n = 200 the last batch holds 8 samples: its logits once depended on the network's position.
    alone = lenet_runs([11], pooling=False, n=n)[0]
    in_three = lenet_runs([20, 11, 21], pooling=False, n=n)[1]
    in_seven = lenet_runs([22, 23, 24, 25, 26, 27, 11], pooling=False, n=n)[-1]   # second stack, last position
    np.testing.assert_array_equal(alone, in_three)
    np.testing.assert_array_equal(alone, in_seven)


def cells_of(results_dir, name="fourier"):
    """{cell: arrays} of every stored cell of a sweep folder."""
    out = {}
    for path in sorted((Path(results_dir) / name).glob("*.npz")):
        r = store.load(path)
        c = r.settings["cell"]
        out[(c["arch"], c["kx"], c["ky"])] = r.arrays
    return out


def assert_same_cells(a, b):
    assert a.keys() == b.keys() and a
    for key in a:
        for name in a[key]:
            np.testing.assert_array_equal(a[key][name], b[key][name], err_msg=f"{key} {name}")


def run_sweep(results_dir, batch=32, shard=0, num_shards=1):
    return ch1_fourier.sweep_directions(["lenet"], GRID, SETTINGS, results_dir, batch=batch, shard=shard,
                                        num_shards=num_shards, progress=False)


@pytest.mark.slow   # over 3 s on a quiet 2-core CPU (issue 39): make test, not make check
def test_sweep_cells_equal_whatever_the_batch_or_shard(tmp_path):
    run_sweep(tmp_path / "whole")
    for s in range(3):
        run_sweep(tmp_path / "sharded", batch=2, shard=s, num_shards=3)
    run_sweep(tmp_path / "single", batch=1)                       # every cell computed alone
    assert_same_cells(cells_of(tmp_path / "whole"), cells_of(tmp_path / "sharded"))
    assert_same_cells(cells_of(tmp_path / "whole"), cells_of(tmp_path / "single"))


SCRIPT = """
import sys, torch
torch.set_num_threads({threads})
sys.path.insert(0, {tests!r})
from test_reproducible import run_sweep
run_sweep({folder!r}, batch=1)
"""


@pytest.mark.slow
def test_sweep_killed_and_restarted_equals_uninterrupted(tmp_path):
    threads = torch.get_num_threads()
    code = SCRIPT.format(threads=threads, tests=str(Path(__file__).parent), folder=str(tmp_path / "killed"))
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    folder = tmp_path / "killed" / "fourier"
    deadline = time.time() + 300
    while time.time() < deadline and len(list(folder.glob("*.npz"))) < 2 and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)                              # mid-run: cells 1-2 stored, one in flight
    proc.wait()
    stored_before = len(list(folder.glob("*.npz")))
    assert 1 <= stored_before < len(GRID.half()), "the kill must land mid-sweep"
    subprocess.run([sys.executable, "-c", code], env=env, check=True)   # restart: computes the rest
    torch.set_num_threads(threads)
    run_sweep(tmp_path / "whole")
    assert_same_cells(cells_of(tmp_path / "whole"), cells_of(tmp_path / "killed"))
    assert not list(folder.glob(".*.tmp")), "the restart removes the killed writer's temporary files"


@pytest.mark.slow
def test_nad_estimate_same_in_memory_stored_resumed_and_shared(tmp_path):
    kw = dict(method="secant", seed=2, progress=False)
    memory = estimate_kw("lenet", 10, first=120, **kw)           # chunks [120, 125), [125, 130)
    stored = estimate_kw("lenet", 10, first=120, results_dir=tmp_path, **kw)
    np.testing.assert_array_equal(memory.nads, stored.nads)
    np.testing.assert_array_equal(memory.eigenvalues, stored.eigenvalues)
    chunks = sorted((tmp_path / "nad_chunks").glob("*.npz"))
    assert len(chunks) == 2
    chunks[1].unlink()                                             # lose a chunk: it is recomputed
    resumed = estimate_kw("lenet", 10, first=120, results_dir=tmp_path, **kw)
    np.testing.assert_array_equal(memory.nads, resumed.nads)
    later = estimate_kw("lenet", 5, first=125, results_dir=tmp_path, **kw)   # reuses chunk [125, 130)
    alone = estimate_kw("lenet", 5, first=125, **kw)
    np.testing.assert_array_equal(later.nads, alone.nads)


def test_merged_chunks_give_the_covariance_of_all_networks():
    x0 = nads.eval_point_for(0, (1, 32, 32))
    factory = lambda: models.build("lenet", num_classes=1)
    estimator = nads.EstimateSettings("autograd", batch_size=4)
    chunks = [nads.chunk_moments(factory, estimator, x0, a, b) for a, b in ((0, 4), (4, 7))]
    G = torch.stack([nads.autograd_one(nads.network(factory, 0, i, x0.device), x0) for i in range(7)])
    cov = np.cov(G.double().numpy().T)
    # vmapped (chunks) and single-network gradients differ by float32 rounding: 1e-4 of the largest entry
    np.testing.assert_allclose(nads.merge(chunks, "autograd"), cov, rtol=0, atol=1e-4 * np.abs(cov).max())


def test_stale_temporaries_of_dead_writers_are_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    stale = tmp_path / f".x.npz.{pid}.{store.HOST}.abc123.tmp"
    foreign = tmp_path / f".x.npz.{pid}.otherhost.abc123.tmp"
    live = tmp_path / f".y.npz.{os.getpid()}.{store.HOST}.abc123.tmp"
    for f in (stale, foreign, live):
        f.write_bytes(b"partial")
    store.save(tmp_path / "z.npz", {"a": np.zeros(2)}, {"seed": 0})
    assert not stale.exists() and foreign.exists() and live.exists()


def test_records_hold_seed_device_duration_and_versions(tmp_path):
    res = sweeps.sweep("s", [{"k": 1}], lambda cells: [{"a": np.ones(1)} for _ in cells],
                       {"seed": 7, "device": "cpu"}, tmp_path, progress=False)[0]
    rec = res.record
    assert (rec["seed"], rec["device"]) == (7, "cpu")
    assert rec["duration_s"] is not None and rec["nadcore_version"] and rec["torch_version"]
    path = estimate_kw("logreg", 3, progress=False).save(tmp_path / "n.npz")
    rec = store.load(path).record
    assert (rec["seed"], rec["device"]) == (0, "cpu") and rec["duration_s"] is not None


@pytest.mark.parametrize("batch, channels", [(128, 1), (67, 4)])
@pytest.mark.parametrize("pooling", models.LENET_POOLINGS)
def test_stacked_gradient_does_not_depend_on_position(pooling, batch, channels):
    # Six identical LeNets on the same batch: logits and every gradient equal bitwise. The bias
    # gradient of the first conv (added after pooling) once depended on the slot, and trained cells
    # diverged; so did the logits of a batch of 67 (Chapter 5's digits: 1,347 = 10 * 128 + 67).
    import torch.nn.functional as F
    from torch.func import stack_module_state

    from nadcore import stacked
    nets = []
    for _ in range(6):
        torch.manual_seed(1)
        nets.append(models.build("lenet", pooling=pooling, in_channels=channels))
    params, _ = stack_module_state(nets)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1, batch, channels, 32, 32, generator=g).expand(6, -1, -1, -1, -1) * 3
    y = torch.randint(0, 2, (1, batch), generator=g).expand(6, -1)
    out = stacked.forward(nets[0])(params, x.contiguous())
    assert all(torch.equal(out[j], out[0]) for j in range(6))
    F.cross_entropy(out.flatten(0, 1), y.flatten(), reduction="none").view(6, -1).mean(1).sum().backward()
    for name, p in params.items():
        assert all(torch.equal(p.grad[j], p.grad[0]) for j in range(6)), name


def test_gradient_clipping_does_not_depend_on_position():
    # The per-network norm was one reduction over the stack's rows: slots 4 and 5 of six identical
    # LeNets were scaled differently and diverged after ~400 steps at the published settings.
    from torch.func import stack_module_state
    nets = []
    for _ in range(6):
        torch.manual_seed(1)
        nets.append(models.build("lenet"))
    params, _ = stack_module_state(nets)
    g = torch.Generator().manual_seed(0)
    for trial in range(20):
        for p in params.values():
            p.grad = (torch.randn(p.shape[1:], generator=g) * 0.1).expand_as(p).contiguous()
        train.clip_per_network(list(params.values()), 0.5)
        for name, p in params.items():
            assert all(torch.equal(p.grad[j], p.grad[0]) for j in range(6)), (trial, name)
