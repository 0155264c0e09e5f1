"""The README's cluster recipe on a real SLURM: a single-node cluster started for the test (root only).

`nadcore submit` writes and submits an array of shards and an `afterok` collector; the collected
results must be bitwise those of one uninterrupted process, a killed array task must resume
without recomputing finished cells, and a NAD estimate split in two shards must merge to the
single-process estimate. The fixture starts munged, slurmctld and slurmd from Debian's packages
(`tools/ensure-slurm.sh` installs them) and stops them by their process ids.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT

from nadcore import nads, store

NADCORE = str(Path(sys.executable).with_name("nadcore"))
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo")
SHARDING = ("01_fourier", "05_underspecification", "06_antialias")   # the chapters that take a shard

pytestmark = pytest.mark.slurm


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
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
                                cpus=os.cpu_count()))
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


def _queue_empty(env, job):
    """True when `job` has left the queue; fails at once when it can never start (a shard failed)."""
    out = subprocess.run(["squeue", "-h", "-j", job, "-o", "%r"], capture_output=True, text=True, env=env).stdout
    if "DependencyNeverSatisfied" in out:
        subprocess.run(["scancel", job], env=env)
        pytest.fail(f"job {job} can never start: a job it depends on failed (see the slurm-*.out logs)")
    return not out.strip()


def _sbatch(env, *args):
    done = subprocess.run(["sbatch", "--parsable", *args], capture_output=True, text=True, env=env, check=True)
    return done.stdout.strip().split(";")[0]


def _arrays(folder):
    """`{relative path: arrays}` of every stored result under `folder`."""
    return {p.relative_to(folder): store.load(p).arrays for p in sorted(Path(folder).rglob("*.npz"))}


def _assert_bitwise_equal(a, b):
    left, right = _arrays(a), _arrays(b)
    assert left.keys() == right.keys(), set(left) ^ set(right)
    for path in left:
        for name in left[path]:
            np.testing.assert_array_equal(left[path][name], right[path][name], err_msg=f"{path}:{name}")


def test_nad_chunks_in_two_shards_merge_to_the_single_process_estimate(slurm, tmp_path):
    shared = tmp_path / "shared"
    script = tmp_path / "nads.sbatch"
    script.write_text(f"#!/bin/bash\n#SBATCH --array=0-1\n#SBATCH --output={tmp_path}/nads-%a.out\n"
                      f"{NADCORE} nads --arch lenet --networks 250 --device cpu --no-progress --results-dir {shared} "
                      '--shard "$SLURM_ARRAY_TASK_ID" --num-shards 2\n')
    job = _sbatch(slurm, str(script))
    _wait(lambda: _queue_empty(slurm, job), 600, "the NAD shards")
    single = nads.estimate("lenet", 250, device="cpu", progress=False)
    merged = nads.estimate("lenet", 250, device="cpu", results_dir=shared, progress=False)   # computes nothing
    assert len(list((shared / "nad_chunks").glob("*.npz"))) == 2
    np.testing.assert_array_equal(single.eigenvalues, merged.eigenvalues)
    np.testing.assert_array_equal(single.nads, merged.nads)


def _submit(env, chapter, shared, runs):
    """`nadcore submit` the chapter in two shards; returns `(array id, collector id)`. The scripts it
    submitted are the ones `--dry-run` prints."""
    argv = [NADCORE, "submit", chapter, "--shards", "2", "--device", "cpu", "-p", "results_dir", str(shared),
            "--out", str(runs)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    printed = subprocess.run(argv + ["--dry-run"], capture_output=True, text=True, cwd=ROOT).stdout
    for part in ("shards", "collect"):
        script = runs / f"{chapter}-smoke-{part}.sbatch"
        assert f"# {script.name}\n{script.read_text()}" in printed
    return done.stdout.split("array job ")[1].split()[0], done.stdout.split("collector ")[1].split()[0]


@pytest.mark.parametrize("chapter", SHARDING)
def test_the_readme_recipe_collects_what_one_process_computes(slurm, tmp_path, chapter):
    """Array + afterok collector, bitwise equal to one process; for Chapter 1 the array is first
    killed midway and resubmitted: finished cells are not recomputed."""
    shared, runs = tmp_path / "shared", tmp_path / "runs"
    array, collector = _submit(slurm, chapter, shared, runs)
    kept = {}
    if chapter == "01_fourier":
        _wait(lambda: len(list(shared.rglob("*.npz"))) >= 4, 900, "the first stored cells")
        subprocess.run(["scancel", array, collector], env=slurm, check=True)       # killed midway
        _wait(lambda: _queue_empty(slurm, array) and _queue_empty(slurm, collector), 120, "the cancelled jobs")
        kept = {p: p.stat().st_mtime_ns for p in shared.rglob("*.npz")}
        array, collector = _submit(slurm, chapter, shared, runs)                   # resubmitted
    try:
        _wait(lambda: _queue_empty(slurm, array) and _queue_empty(slurm, collector), 2400, f"{chapter}'s jobs")
    finally:
        for log in sorted(runs.glob("slurm-*.out")):       # shown by pytest when the test fails
            print(f"--- {log.name}\n{log.read_text()[-1500:]}")
    log = runs / f"slurm-{collector}.out"
    assert (runs / f"{chapter}-smoke.ipynb").exists(), log.read_text()[-2000:] if log.exists() else "no log"
    assert {p.name for p in runs.glob(f"{chapter}-smoke-shard*of2.ipynb")} == {
        f"{chapter}-smoke-shard0of2.ipynb", f"{chapter}-smoke-shard1of2.ipynb"}
    assert all(p.stat().st_mtime_ns == t for p, t in kept.items()), "a finished cell was recomputed"
    alone = tmp_path / "alone"
    done = subprocess.run([NADCORE, "run", chapter, "--device", "cpu", "--no-progress", "-p", "results_dir", str(alone),
                           "--out", str(tmp_path / "runs-alone")], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    _assert_bitwise_equal(shared, alone)
