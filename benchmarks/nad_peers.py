"""NAD estimators side by side, in one process: nadcore against a plain loop, the authors' algorithm and `nads` 0.0.4.

The same networks (network i from seed i, the registry's one-output factory; the peers build theirs as plain code
does, `torch.manual_seed` then the factory, and nadcore with `nads.network`: the same parameters, bitwise) go
through each implementation, each timing including the networks' construction, interleaved: every round times
each implementation once and the best of `--rounds` is kept, so a change in the machine's load moves all of them
alike. The rows:

- nadcore: one chunk of `nads.estimate` (`chunks.chunk_arrays`: the secant with the first layer injected, and
  pooled as it is injected where a 2x2 pooling follows, or the exact gradient through vmap; the chunk's memory
  kept for its next network, `device.kept_memory`), its stored precision.
- plain loop: one network at a time, all 2D probes in one batch under `torch.inference_mode` (autocast for
  bfloat16); for the exact gradient, a bare `torch.func.vmap(grad)` over the stacked networks.
- authors: `GradientCovarianceAnisotropyFinder` re-implemented as the authors wrote it
  (`../shared/published/authors-code`): one network at a time, D probes of x0 + h e_i then D of x0 - h e_i,
  gradients tracked, then scikit-learn's PCA of the N x D gradients. float32 secant only.
- nads 0.0.4 (PyPI; skipped when it does not import: `uv pip install nads==0.0.4`): its `GradientCovariance`
  loop of `numerical_jacobian` (secant) or `backprop_jacobian` (exact gradient), then its SVD. float32 only.
- networks: the networks alone, built and dropped: the floor under every row (the initialisation's serial random
  draws; a deep network's exact gradient spends most of its time there, in every implementation alike).

Each row prints seconds per network for the gradients, its ratio to nadcore (above 1: slower than nadcore), the
minor page faults per network (memory faulted in anew: the fewest of the rounds, the networks' construction
included), and the fraction of the peak measured in this run (the secant's direct-convolution FLOPs,
`nad_throughput.secant_gflop`, over the best of matrix products and 3x3 convolutions in that precision).
Then the eigen step on D = 1,024: nadcore's `eig_decreasing` of the covariance as `nads.estimate` runs it
(`eig_threads=1`) and at this process's threads (`eig_threads=None`, how the bundle's estimates were made), the
PCA and the SVD of the N x D gradients of the peers, each quiet, beside a pure-Python busy process (a build's
interpreter or compiler) and beside a 2-thread matrix-product loop in another process. No timing is asserted anywhere.

    .venv/bin/python benchmarks/nad_peers.py --arch lenet --networks 16 --rounds 3
    .venv/bin/python benchmarks/nad_peers.py --arch vgg11 resnet18 --networks 2 --rounds 2 --no-eigen
"""

import argparse
import contextlib
import importlib.util
import resource
import subprocess
import sys
import time

import numpy as np
import torch
from nad_throughput import conv_peak_gflops, peak_gflops, secant_gflop
from torch.func import functional_call, grad, stack_module_state, vmap

from nadcore import nads
from nadcore.device import autocast
from nadcore.nads import chunks
from nadcore.nads.settings import EstimateSettings

STEP = 100.0   # the published secant step h
CPU = torch.device("cpu")


def plain_network(factory, i):
    """Network i as plain code builds it: `torch.manual_seed`, then the factory (nadcore's parameters, bitwise)."""
    torch.manual_seed(nads.network_seed(0, i))
    return factory().eval()


def build(factory, n):
    """Networks 0 .. n - 1 of the plain loop (eval mode, no parameter gradients)."""
    return [plain_network(factory, i).requires_grad_(False) for i in range(n)]


def nadcore_rows(factory, x0, n, method, precision):
    s = EstimateSettings(method, STEP, 0, tuple(x0.shape), True, precision, False, None)
    return torch.as_tensor(chunks.chunk_arrays(factory, s, x0, 0, n)["gradients"])


def plain_secant(factory, x0, n, precision):
    """The 20-line loop: one network at a time, the 2D probes in one batch."""
    D = x0.numel()
    eye = torch.eye(D).reshape(D, *x0.shape)
    X = torch.cat([x0 + STEP * eye, x0 - STEP * eye])
    rows = []
    for net in build(factory, n):
        if precision != "float32":
            net = net.to(memory_format=torch.channels_last)
        with torch.inference_mode(), autocast(CPU, precision):
            y = net(X).float().reshape(-1)
        rows.append((y[:D] - y[D:]) / (2 * STEP))
    return torch.stack(rows)


def plain_autograd(factory, x0, n, precision="float32"):
    """A bare vmap(grad) of the networks' output at x0 over their stacked parameters."""
    nets = build(factory, n)
    params, buffers = stack_module_state(nets)
    base = nets[0]
    f = lambda p, b, x: functional_call(base, (p, b), (x[None],)).sum()
    return vmap(grad(f, argnums=2), in_dims=(0, 0, None))(params, buffers, x0).reshape(n, -1)


def authors_secant(factory, x0, n, precision="float32"):
    """`input_numerical_jacobian` of the authors' `utils.py`, one network at a time (batch_size None: all D
    probes of each sign in one batch, gradients tracked as in their code)."""
    D = x0.numel()
    v = torch.eye(D).view([D] + list(x0.shape))
    rows = []
    for i in range(n):
        model = plain_network(factory, i)   # their networks keep requires_grad
        fn = lambda x, model=model: -model(x)
        jac = torch.zeros(D)
        plus, minus = x0[None, :] + STEP * v, x0[None, :] - STEP * v
        jac[:] = ((fn(plus) - fn(minus)) / (2 * STEP)).detach().cpu()[:, 0]
        rows.append(jac.view(-1))
    return torch.stack(rows)


def pypi_nads():
    """`nads` 0.0.4 from PyPI, or None where it does not import."""
    if importlib.util.find_spec("nads") is None:
        return None
    import nads as pypi

    return pypi


def pypi_rows(factory, x0, n, method, precision="float32"):
    """`nads.GradientCovariance`'s sampling loop (its `nads()` stacks `sample_grad` n times)."""
    pypi = pypi_nads()
    jac = pypi.numerical_jacobian if method == "secant" else pypi.backprop_jacobian
    counter = iter(range(n))
    model_cls = lambda: plain_network(factory, next(counter))
    model_cls.__name__ = "net"
    gc = pypi.GradientCovariance(x0.clone(), model_cls, jacobian_fn=jac)   # its backprop_jacobian sets requires_grad
    return torch.stack([gc.sample_grad.reshape(-1) for _ in range(n)])


def networks_alone(factory, n):
    """The networks alone, built as nadcore builds them (`nads.network`) and dropped: the initialisation's serial
    random draws, which every row pays alike (its parameters are bitwise the peers')."""
    for i in range(n):
        nads.network(factory, 0, i, CPU)
    return "built"


FLOOR = "networks"   # the row of the networks alone: timed like the others, no gradients to compare or price
IMPLEMENTATIONS = {   # label: (function(factory, x0, n, method, precision) or None where it does not apply)
    "nadcore": lambda f, x0, n, m, p: nadcore_rows(f, x0, n, m, p),
    "plain loop": lambda f, x0, n, m, p: (plain_secant if m == "secant" else plain_autograd)(f, x0, n, p),
    "authors": lambda f, x0, n, m, p: authors_secant(f, x0, n) if (m, p) == ("secant", "float32") else None,
    "nads 0.0.4": lambda f, x0, n, m, p: pypi_rows(f, x0, n, m) if p == "float32" and pypi_nads() else None,
    FLOOR: lambda f, x0, n, m, p: networks_alone(f, n),
}


def interleaved(arch, n, method, precision, rounds):
    """`({label: best seconds per network}, {label: fewest minor page faults per network})` of every
    implementation that applies, timed in turn `rounds` times; checks that each computes the same gradients as
    nadcore, up to sign (float32: to 1e-3 relative)."""
    factory, _ = nads.one_output_factory(arch)
    x0 = nads.eval_point_for(0, (1, 32, 32))
    best, faults, reference = {}, {}, None
    for _ in range(rounds):
        for label, run in IMPLEMENTATIONS.items():
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            start = time.perf_counter()
            G = run(factory, x0, n, method, precision)
            if G is None:
                continue
            best[label] = min(best.get(label, np.inf), (time.perf_counter() - start) / n)
            faulted = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / n
            faults[label] = min(faults.get(label, np.inf), faulted)
            if label == "nadcore":
                reference = G
            elif label != FLOOR and precision == "float32":   # the authors differentiate -f: the sign
                err = min(float((G - sign * reference).norm() / reference.norm()) for sign in (1, -1))
                if err > 1e-3:
                    raise AssertionError(f"{arch} {method}: {label} differs from nadcore by {err:.2e} (relative)")
    return best, faults


@contextlib.contextmanager
def busy_beside(loop):
    """Another process running the Python source `loop` while the block runs (`BESIDE`: a build beside it)."""
    proc = subprocess.Popen([sys.executable, "-c", loop])
    time.sleep(3)                                   # torch imported, the loop running
    try:
        yield
    finally:
        proc.kill()
        proc.wait()


BESIDE = {"beside a pure-Python process": "while True: sum(i * i for i in range(1000))",
          "beside a 2-thread matmul loop": "import torch; torch.set_num_threads(2); a = torch.randn(1024, 1024)\n"
                                           "while True: a @ a"}


def eigen_rows(n_rows, repeats=3):
    """Seconds (median of `repeats`) of each eigen step on D = 1,024: `{label: seconds}`."""
    from sklearn.decomposition import PCA

    rng = np.random.default_rng(0)
    G = rng.standard_normal((n_rows, 1024)).astype(np.float32) @ np.diag(np.linspace(1, 0.01, 1024)).astype(np.float32)
    C = np.cov(G.T)
    threads = torch.get_num_threads()
    steps = {"nadcore eigh, as estimated (eig_threads=1)": lambda: nads.eig_decreasing(C, threads=1),
             f"nadcore eigh, the caller's {threads} threads (stored ones)": lambda: nads.eig_decreasing(C),
             f"authors: PCA of the {n_rows} x 1,024 gradients": lambda: PCA(n_components=1024).fit(G),
             f"nads 0.0.4: SVD of the {n_rows} x 1,024 gradients": lambda: torch.linalg.svd(torch.as_tensor(G),
                                                                                             full_matrices=False)}
    out = {}
    for label, fn in steps.items():
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        out[label] = float(np.median(times))
    return out


def bfloat16_instructions():
    """The CPU's bfloat16 instructions named by `/proc/cpuinfo` (avx512_bf16, amx_bf16), or "none": the bfloat16
    rows then run emulated, and the bfloat16 peak measured here is not a hardware one."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split() for line in f if line.startswith("flags")), [])
    except OSError:
        return "unknown"
    return ", ".join(x for x in ("avx512_bf16", "amx_bf16") if x in flags) or "none"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", nargs="+", default=["lenet"])
    ap.add_argument("--networks", type=int, default=8, help="networks per timing of the secant")
    ap.add_argument("--autograd-networks", type=int, default=32,
                    help="networks per timing of the exact gradient (nadcore pads a batch to 32 on the CPU)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best of each is kept")
    ap.add_argument("--precision", nargs="+", default=["float32", "bfloat16"], choices=["float32", "bfloat16"])
    ap.add_argument("--method", nargs="+", default=["secant", "autograd"], choices=["secant", "autograd"])
    ap.add_argument("--eigen-rows", type=int, default=2048, help="N of the peers' N x D eigen step")
    ap.add_argument("--no-eigen", action="store_true", help="leave out the eigen step's timings")
    args = ap.parse_args(argv)
    peaks = {str(t).split(".")[-1]: max(peak_gflops(t), conv_peak_gflops(t)) for t in (torch.float32, torch.bfloat16)}
    print(f"threads={torch.get_num_threads()} networks={args.networks} rounds={args.rounds}; measured peaks (GFLOP/s): "
          + ", ".join(f"{k} {v:.0f}" for k, v in peaks.items()) + f"; bfloat16 instructions: {bfloat16_instructions()}"
          + ("" if pypi_nads() else "; nads 0.0.4 not installed: its rows are left out"), flush=True)
    for arch in args.arch:
        gflop = secant_gflop(arch)
        for method in args.method:
            for precision in args.precision if method == "secant" else ["float32"]:
                n = args.networks if method == "secant" else args.autograd_networks
                best, faults = interleaved(arch, n, method, precision, args.rounds)
                for label, s in best.items():
                    frac = (f"  {gflop / s:6.1f} GFLOP/s = {gflop / s / peaks[precision]:5.1%} of the {precision} peak"
                            if method == "secant" and label != FLOOR else "")
                    print(f"{arch:<9} {method:<8} {precision:<8} {label:<11} {s:8.4f} s/network   "
                          f"{s / best['nadcore']:5.2f}x nadcore's time  {faults[label]:8.0f} page faults/network"
                          f"{frac}", flush=True)
    if args.no_eigen:
        return
    rows = {"quiet": eigen_rows(args.eigen_rows)}
    for beside, loop in BESIDE.items():
        with busy_beside(loop):
            rows[beside] = eigen_rows(args.eigen_rows)
    print("eigen step, D = 1,024 (median of 3): " + " | ".join(rows))
    for label in rows["quiet"]:
        print(f"  {label:<55} " + " | ".join(f"{r[label]:7.3f} s" for r in rows.values()))


if __name__ == "__main__":
    main()
