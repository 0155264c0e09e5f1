"""Wall-clock timing shared by the benchmark scripts (GPU work is synchronised before reading the clock)."""

import time

import torch


def timed(fn, repeats=1):
    """Run `fn` `repeats` times; return (best seconds, the last result)."""
    best, out = float("inf"), None
    for _ in range(repeats):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        start = time.perf_counter()
        out = fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best, out
