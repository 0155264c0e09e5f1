"""The cluster recipe of book/running.md on a real SLURM: a single-node cluster started for the test (root only).

`nadcore submit` writes and submits an array of shards and an `afterok` collector (Chapter 1); the
collected results must be bitwise those of one uninterrupted process (computed in this process by
the functions the notebook calls), a killed array task must resume without recomputing finished
cells, and a NAD estimate split in two shards must merge to the single-process estimate. Chapters 5
and 6 shard through the same code (`sweeps.sweep`, the CLI's scripts): each is run whole in one
process by `nadcore run` (its smoke checks at the tiny scale), its scripts are checked with
`--dry-run`, and its two shards and collector are computed in this process by the functions its
notebook calls, bitwise equal to that run. A notebook execution costs 15-30 s before it computes
anything (kernel, imports; the stored results' figures but in a shard's run, which leaves out the
cells tagged `page-only`), so those two chapters' six shard and collector notebooks, which would
prove nothing Chapter 1's do not, are left out. The chapters run on grids of a few cells (`TINY`,
through their `overrides` parameter), all at once. The fixture starts munged, slurmctld and slurmd
from Debian's packages (`tools/ensure-slurm.sh` installs them) and stops them by their process ids.
"""

import contextlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import ROOT, estimate_kw

from nadcore import cli, store

NADCORE = str(Path(sys.executable).with_name("nadcore"))
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo")
SHARDING = ("01_fourier", "05_underspecification", "06_antialias")   # the chapters that take a shard
ON_SLURM = "01_fourier"   # the chapter whose shards and collector run on the cluster (the others: in process)
# The folders of a results_dir that hold the sharded cells (Chapter 6 shards its Fig. 1 only; its collector
# estimates the NADs and computes Fig. 6)
SHARDED = {"05_underspecification": ("underspec_pairs_lenet", "underspec_pairs_mlp", "underspec_ood_lenet",
                                     "underspec_ood_mlp"), "06_antialias": ("fourier",)}

pytestmark = pytest.mark.slurm


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SHARE = 2   # tasks per core at once (the partition's OverSubscribe=FORCE)
CONF = """ClusterName=nadbook
SlurmctldHost={host}
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
AuthType=auth/munge
AuthInfo=socket={dir}/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.log
SlurmUser=root
SlurmdUser=root
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName={host} CPUs={cpus} RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:{share}
"""


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """`{env}` of a running single-node SLURM cluster (SLURM_CONF set); daemons stopped afterwards."""
    if os.geteuid() != 0:
        pytest.skip("the SLURM test starts munged, slurmctld and slurmd: it needs root")
    if not all(shutil.which(d) or os.path.exists(f"/usr/sbin/{d}") for d in DAEMONS):
        if os.environ.get("CI"):
            pytest.fail("SLURM is missing: make test installs it as root (tools/ensure-slurm.sh)")
        pytest.skip("SLURM is not installed (apt-get install slurmctld slurmd slurm-client munge)")
    folder = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool"):
        (folder / sub).mkdir()
    host = socket.gethostname().split(".")[0]
    conf = folder / "slurm.conf"
    conf.write_text(CONF.format(host=host, ctld_port=_free_port(), d_port=_free_port(), dir=folder,
                                cpus=os.cpu_count(), share=SHARE))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    sbin = lambda d: shutil.which(d) or f"/usr/sbin/{d}"
    subprocess.run([sbin("munged"), f"--socket={folder}/munge.socket", f"--pid-file={folder}/munged.pid",
                    f"--log-file={folder}/munged.log", f"--seed-file={folder}/munged.seed", "--force"],
                   check=True, capture_output=True)
    subprocess.run([sbin("slurmctld"), "-f", str(conf)], check=True, env=env)
    subprocess.run([sbin("slurmd"), "-f", str(conf)], check=True, env=env)
    try:
        _wait(lambda: "idle" in subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True,
                                               env=env).stdout, 60, "the node to come up")
        yield env
    finally:
        for name in ("slurmd", "slurmctld", "munged"):
            pid_file = folder / f"{name}.pid"
            if pid_file.exists():
                try:
                    os.kill(int(pid_file.read_text().split()[0]), signal.SIGTERM)
                except (ProcessLookupError, ValueError):
                    pass


def _wait(condition, seconds, what):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(1)
    raise TimeoutError(f"waited {seconds} s for {what}")


def _ended(env, job):
    """True when `job` has left the queue; a job that can never start (a job it waits for failed) is
    cancelled and counts as ended (the test then finds its notebook missing and shows the logs)."""
    out = subprocess.run(["squeue", "-h", "-j", job, "-o", "%r"], capture_output=True, text=True, env=env).stdout
    if "DependencyNeverSatisfied" in out:
        subprocess.run(["scancel", job], env=env)
    return not out.strip() or "DependencyNeverSatisfied" in out


def _sbatch(env, *args):
    done = subprocess.run(["sbatch", "--parsable", *args], capture_output=True, text=True, env=env, check=True)
    return done.stdout.strip().split(";")[0]


def _arrays(folder, threads=None):
    """`{relative path: arrays}` of every stored result under `folder` (each computed with `threads`
    threads, if given)."""
    stored = {p.relative_to(folder): store.load(p) for p in sorted(Path(folder).rglob("*.npz"))}
    assert threads is None or {r.record["threads"] for r in stored.values()} == {threads}
    return {p: r.arrays for p, r in stored.items()}


def _assert_bitwise_equal(a, b, threads=None):
    left, right = _arrays(a, threads), _arrays(b, threads)
    assert left.keys() == right.keys(), set(left) ^ set(right)
    for path in left:
        for name in left[path]:
            np.testing.assert_array_equal(left[path][name], right[path][name], err_msg=f"{path}:{name}")


def test_nad_chunks_in_two_shards_merge_to_the_single_process_estimate(slurm, tmp_path):
    shared = tmp_path / "shared"
    script = tmp_path / "nads.sbatch"
    script.write_text(f"#!/bin/bash\n#SBATCH --array=0-1\n#SBATCH --output={tmp_path}/nads-%a.out\n"
                      f"{NADCORE} nads --arch logreg --networks 250 --device cpu --no-progress --results-dir {shared} "
                      '--shard "$SLURM_ARRAY_TASK_ID" --num-shards 2\n')
    job = _sbatch(slurm, str(script))     # LogReg, the cheapest network: chunks and merge are any network's
    _wait(lambda: _ended(slurm, job), 600, "the NAD shards")
    single = estimate_kw("logreg", 250, device="cpu", progress=False)
    merged = estimate_kw("logreg", 250, device="cpu", results_dir=shared, progress=False)   # computes nothing
    assert len(list((shared / "nad_chunks").glob("*.npz"))) == 2
    np.testing.assert_array_equal(single.eigenvalues, merged.eigenvalues)
    np.testing.assert_array_equal(single.nads, merged.nads)


# Each grid cut to a few cells of a few hundred samples and one or two epochs, the NADs estimated from
# 16 networks (`-p overrides`, which `nadcore submit` checks like any parameter): what is under test is
# the recipe, not the figures. Chapter 1: 5 directions per grid; Chapter 5: its 2 x 2 NAD index pairs
# and 2 indices of Fig. 3; Chapter 6: two pooling variants on 5 directions, Fig. 6 at 2 indices. Chapter 1's
# Fig. 2 trains 40 epochs (seconds on one core): its array is still at work when the test cancels it, a second
# after Fig. 1 stored its first cells (Figs. 1-3 run back to back in `ch1_fourier.chapter_results`).
TINY = {
    "01_fourier": {"fourier": {"n": 200, "epochs": 1, "grid": {"step": 8},
                               "fig2": {"n": 200, "epochs": 40, "grid": {"step": 8}}}},
    "05_underspecification": {"underspecification": {
        "nads": {"num_networks": 16},
        "pairs": {"n_train": 200, "n_test": 100, "resolution": 5,
                  "recipe": {"lenet": {"epochs": 1}, "mlp": {"epochs": 1}}},
        "ood": {"limit": 200, "indices": [0, 1000], "recipe": {"lenet": {"epochs": 1}, "mlp": {"epochs": 1}}}}},
    "06_antialias": {"antialias": {"variants": ["max", "blur3"], "nads": {"num_networks": 16, "conv_sizes": [4]}},
                     "fourier": {"n": 200, "epochs": 1}, "nads": {"fig6": {"n_train": 200, "epochs": 1}}},
}


def _in_process(chapter, results_dir, shard, num_shards):
    """What `chapter`'s notebook computes and stores at the tiny scale, through the same library calls
    (its parameters cell: seed 0, device "cpu", `TINY` as its overrides; its data_root `../data`)."""
    if chapter == "01_fourier":
        from nadcore.experiments import ch1_fourier
        from nadcore.presets import preset

        ch1_fourier.chapter_results(preset("fourier", "smoke", TINY[chapter]), 0, "cpu", results_dir, 1,
                                    shard=shard, num_shards=num_shards)
    elif chapter == "05_underspecification":
        from nadcore.experiments import ch5_underspec as underspec

        P = underspec.chapter_settings("smoke", 0, TINY[chapter])
        found = underspec.chapter_nads(P, results_dir, "smoke", "cpu")
        run = dict(device="cpu", shard=shard, num_shards=num_shards, progress=False)
        for a in P.pairs.archs:
            underspec.pair_grid(a, found[a], P.pairs, results_dir, **run)
        for a in P.ood.archs:
            underspec.ood_grid(a, found[a], P.ood, results_dir, ROOT / "data", **run)
    elif chapter == "06_antialias":
        from nadcore.experiments import ch6_antialias as antialias

        antialias.chapter_results("smoke", 0, results_dir, "cpu", progress=False, shard=shard, num_shards=num_shards,
                                  overrides=TINY[chapter])
    else:
        raise ValueError(f"chapter must be one of {', '.join(SHARDING)}; got {chapter!r}")


@contextlib.contextmanager
def one_thread():
    """torch on one thread inside the block, as the cluster's tasks and the one-process runs."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@dataclass
class Recipe:
    """One chapter's run of the cluster recipe: its folder, its jobs, and the one-process run beside them."""
    chapter: str
    folder: Path
    jobs: tuple = ()                              # (array, collector)
    alone: subprocess.Popen | None = None
    kept: dict = field(default_factory=dict)     # {stored cell: mtime} when Chapter 1's array was killed
    collected: set = field(default_factory=set)  # the in-process shards' stored cells before their collector ran

    shared = property(lambda self: self.folder / "shared")
    runs = property(lambda self: self.folder / "runs")

    def args(self, results_dir, out):
        """The arguments of `nadcore run` and `submit`: the CPU, the tiny grids, these folders."""
        return [self.chapter, "--device", "cpu", "-p", "overrides", json.dumps(TINY[self.chapter]),
                "-p", "results_dir", str(results_dir), "--out", str(out)]

    def submit(self, env):
        """`nadcore submit` the chapter in two shards: an array and its `afterok` collector."""
        done = subprocess.run([NADCORE, "submit", *self.args(self.shared, self.runs), "--shards", "2"],
                              capture_output=True, text=True, env=env, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        self.jobs = (done.stdout.split("array job ")[1].split()[0], done.stdout.split("collector ")[1].split()[0])

    def dry_run(self):
        """The scripts `nadcore submit --dry-run` prints: those submitted (Chapter 1), else an array of
        two shards of this chapter and its collector."""
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            assert cli.main(["submit", *self.args(self.shared, self.runs), "--shards", "2", "--dry-run"]) == 0
        if self.jobs:
            for part in ("shards", "collect"):
                script = self.runs / f"{self.chapter}-smoke-{part}.sbatch"
                assert f"# {script.name}\n{script.read_text()}" in printed.getvalue()
            return
        array, collector = printed.getvalue().split(f"# {self.chapter}-smoke-collect.sbatch\n")
        assert "#SBATCH --array=0-1\n" in array and '-p shard "$SLURM_ARRAY_TASK_ID" -p num_shards 2\n' in array
        assert f"nadcore run {self.chapter} --scale smoke --device cpu" in collector and "-p shard" not in collector

    def shards_in_process(self):
        """Shards 0 and 1 of 2 into `shared`, then the collector (one shard of one) over them."""
        with one_thread():
            for shard in (0, 1):
                _in_process(self.chapter, self.shared, shard, 2)
            self.collected = set(self.shared.rglob("*.npz"))
            _in_process(self.chapter, self.shared, 0, 1)

    def alone_in_process(self):
        """The whole chapter in this process (one shard of one), into a results folder of its own."""
        with one_thread():
            _in_process(self.chapter, self.folder / "alone", 0, 1)

    def run_alone(self, env):
        """`nadcore run`: the whole chapter in one process, into a results folder of its own (returns when done)."""
        argv = [NADCORE, "run", *self.args(self.folder / "alone", self.folder / "alone-runs"), "--no-progress"]
        with open(self.folder / "alone.log", "w") as log:
            self.alone = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
            self.alone.wait()

    def ended(self, env):
        alone_done = self.chapter == ON_SLURM or (self.alone is not None and self.alone.poll() is not None)
        return all(_ended(env, job) for job in self.jobs) and alone_done


@pytest.fixture(scope="module")
def recipes(slurm, tmp_path_factory, request):
    """`{chapter: Recipe}` of the sharding chapters this session tests. Chapter 1 is submitted (array
    and collector; the partition oversubscribes the node), its array killed once its first cells are
    stored and submitted again; meanwhile Chapters 5 and 6 run whole in one process (`nadcore run`), one
    at a time, and this process computes Chapter 1's one-process run and the other chapters' shards and
    collectors. Returns when every job and process has ended."""
    tested = {item.callspec.params.get("chapter") for item in request.session.items
              if getattr(item, "module", None) is request.module and hasattr(item, "callspec")}
    recipes = {c: Recipe(c, tmp_path_factory.mktemp(c)) for c in SHARDING if c in tested}
    # Several processes share the node's cores: each computes with one thread (a stored result is bitwise
    # the same at any one thread count; the records say which)
    env = {**slurm, "OMP_NUM_THREADS": "1"}
    stop = threading.Event()
    try:
        if ON_SLURM in recipes:
            recipes[ON_SLURM].submit(env)
        for r in recipes.values():
            r.dry_run()
        # one process at a time beside at most SHARE tasks per core: a dozen kernels at once (~1 GB each)
        # beside pytest and the browser tests' Chromium could exhaust the memory of a 24 GB machine
        alone = threading.Thread(target=lambda: [r.run_alone(env) for r in recipes.values()
                                                 if r.chapter != ON_SLURM and not stop.is_set()], daemon=True)
        alone.start()
        if ON_SLURM in recipes:
            r = recipes[ON_SLURM]
            _wait(lambda: any(r.shared.rglob("*.npz")), 600, "Chapter 1's first stored cells")
            # killed midway (scancel fails on a job that has just ended: the resubmission then recomputes nothing)
            subprocess.run(["scancel", *r.jobs], env=env)
            _wait(lambda: all(_ended(env, job) for job in r.jobs), 120, "the cancelled jobs")
            r.kept = {p: p.stat().st_mtime_ns for p in r.shared.rglob("*.npz")}
            r.submit(env)                                                         # and submitted again
        for r in recipes.values():
            if r.chapter == ON_SLURM:
                r.alone_in_process()
            else:
                r.shards_in_process()
        _wait(lambda: all(r.ended(env) for r in recipes.values()), 1200, "every chapter's jobs")
    finally:
        stop.set()
        for r in recipes.values():
            if r.alone is not None and r.alone.poll() is None:
                r.alone.kill()
                r.alone.wait()
    return recipes


@pytest.mark.parametrize("chapter", SHARDING)
def test_the_cluster_recipe_collects_what_one_process_computes(recipes, chapter):
    """Chapter 1: array + afterok collector, bitwise equal to one process (the functions its notebook
    calls, in this process); its array was killed midway and submitted again: finished cells are not
    recomputed, the others are computed. Chapters 5 and 6:
    their shards and collector (computed in process), bitwise equal to their one-process run, whose
    notebook ran its smoke checks at the tiny scale."""
    r = recipes[chapter]
    for log in sorted(r.runs.glob("slurm-*.out")):       # shown by pytest when the test fails
        print(f"--- {log.name}\n{log.read_text()[-1500:]}")
    if chapter == ON_SLURM:
        log = r.runs / f"slurm-{r.jobs[1]}.out"
        assert (r.runs / f"{chapter}-smoke.ipynb").exists(), log.read_text()[-2000:] if log.exists() else "no log"
        assert {p.name for p in r.runs.glob(f"{chapter}-smoke-shard*of2.ipynb")} == {
            f"{chapter}-smoke-shard0of2.ipynb", f"{chapter}-smoke-shard1of2.ipynb"}
        assert r.kept, "the array was killed before it stored a cell"
        assert all(p.stat().st_mtime_ns == t for p, t in r.kept.items()), "a finished cell was recomputed"
        assert set(r.kept) < set(r.shared.rglob("*.npz")), "the array was killed after it had stored every cell"
    else:   # run whole by `nadcore run`; the shards stored every sharded cell: the collector computed none of them
        assert r.alone.returncode == 0, (r.folder / "alone.log").read_text()[-2000:]
        assert (r.folder / "alone-runs" / f"{chapter}-smoke.ipynb").exists()
        sharded = lambda p: p.relative_to(r.shared).parts[0] in SHARDED[chapter]
        assert len([p for p in r.collected if sharded(p)]) > 2, "the shards stored no grid"
        assert [p for p in set(r.shared.rglob("*.npz")) - r.collected if sharded(p)] == []
    _assert_bitwise_equal(r.shared, r.folder / "alone", threads=1)
