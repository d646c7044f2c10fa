"""Precision check used by the gym-style tests (the gym vendors a richer comparer; this is enough)."""

import torch


def assert_close(actual, expected, *, atol, rtol, name="out"):
    a = actual.detach().cpu().float()
    e = expected.detach().cpu().float()
    if a.shape != e.shape:
        raise AssertionError(f"{name}: shape {tuple(a.shape)} != {tuple(e.shape)}")
    diff = (a - e).abs()
    bad = diff > atol + rtol * e.abs()
    n_bad = int(bad.sum())
    print(f"[{name}] max_abs_diff={float(diff.max()):.3e} out_of_tolerance={n_bad}/{a.numel()}")
    if n_bad or torch.isnan(a).any():
        raise AssertionError(f"{name}: {n_bad} of {a.numel()} elements out of tolerance")
