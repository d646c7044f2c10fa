"""KernelBench task import, round 6's second look (session 40): an adversarial review of round 6's state check,
seeded-buffer rebuild and ``randint`` ranges. What it found and these tests hold:

- the state check compared the first run's output with one rerun on the changed state, so a forward that draws at
  random was blamed on any buffer that changed: ``F.dropout(bn(x), 0.5, training=True)`` or ``bn(x) +
  torch.rand_like(x)`` was refused as "state kept in self.bn.running_mean" instead of naming the dropout / the
  random draw; and its 1e-5 relative tolerance could let a slow EMA (momentum 1e-5) through. Now the pristine state
  runs twice and the changed state once, each seeded alike: a difference beyond the first two's (zero on the CPU)
  is state;
- the rebuild that tells random buffers from constants switched off ``torch.manual_seed`` only: a buffer drawn with
  a seeded ``torch.Generator`` (``generator=torch.Generator().manual_seed(42)``) or a seeded numpy generator
  (``np.random.default_rng(0)``, ``RandomState(0)``) still passed for a constant and stayed inside the golden;
- a ``randint`` draw changed in place afterwards (``ids.clamp_(min=5)``, ``ids[ids < 5] = 5``) kept the call's
  range, so cases drew values the task never gives (0 as a length is a divide by zero); now the draw's version
  counter decides. A cast or view of a draw (``.int()`` for int32 ids, ``.view``) and ``randint_like`` keep the
  call's range (they had the sample's), a cast that wraps (``.to(torch.int8)`` of ids up to 999) does not.

Task texts are our own, inline."""

from __future__ import annotations

import importlib.util
import random
import types
from pathlib import Path
from typing import Any

import pytest

from orchestrator.adapters.kernelbench import _importer, _probe
from orchestrator.adapters.kernelbench._importer import TaskImportError

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


def _kept(torch: Any, model: Any) -> list[str]:
    """:func:`_probe._kept_state` as ``trace`` calls it after a first run on ``x``."""
    x = torch.randn(64, 8, generator=torch.Generator().manual_seed(3)) + 0.5
    before, snapshot = _probe._registered_state(model), _probe._state_values(model, {})
    pristine = _probe._cloned([x])
    _probe._call(model, {}, _probe._cloned(pristine))
    return _probe._kept_state(model, {}, pristine, before, snapshot)


@needs_torch
def test_random_draws_in_forward_are_not_blamed_on_batchnorm_statistics(torch_restored: Any) -> None:
    torch = torch_restored
    F = torch.nn.functional

    class BnDropout(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bn = torch.nn.BatchNorm1d(8)

        def forward(self, x: Any) -> Any:
            return F.dropout(self.bn(x), 0.5, training=self.training)

    class BnNoise(BnDropout):
        def forward(self, x: Any) -> Any:
            return self.bn(x) + torch.rand_like(x)

    class BnEval(BnDropout):  # eval mode reads the running statistics, which then do not change
        def __init__(self) -> None:
            super().__init__()
            self.bn.eval()

        def forward(self, x: Any) -> Any:
            return self.bn(x)

    for model in (BnDropout(), BnNoise(), BnEval()):
        assert _kept(torch, model) == [], type(model).__name__


@needs_torch
def test_state_read_by_forward_is_found_however_small_or_noisy(torch_restored: Any) -> None:
    torch = torch_restored
    F = torch.nn.functional

    class SlowEma(torch.nn.Module):
        def __init__(self, momentum: float) -> None:
            super().__init__()
            self.momentum = momentum
            self.register_buffer("ema", torch.zeros(8))

        def forward(self, x: Any) -> Any:
            self.ema.mul_(1 - self.momentum).add_(self.momentum * x.mean(0))
            return x + self.ema

    class EmaDropout(SlowEma):  # state and a random draw: still state
        def forward(self, x: Any) -> Any:
            return F.dropout(super().forward(x), 0.5, training=True)

    class Reassigned(SlowEma):  # the buffer rebound, not changed in place
        def forward(self, x: Any) -> Any:
            self.ema = (1 - self.momentum) * self.ema + self.momentum * x.mean(0)
            return x * 2 + self.ema

    class Counter(torch.nn.Module):  # changes, never read by the output
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("calls", torch.zeros((), dtype=torch.long))

        def forward(self, x: Any) -> Any:
            self.calls += 1
            return x * 2

    for model in (SlowEma(1e-5), EmaDropout(0.1), Reassigned(0.1)):
        assert _kept(torch, model) == ["ema"], type(model).__name__
    assert _kept(torch, Counter()) == []


@needs_torch
def test_a_buffer_drawn_with_a_seeded_generator_is_random_and_arange_stays_constant(torch_restored: Any) -> None:
    torch = torch_restored
    np = pytest.importorskip("numpy")

    class TorchGenerator(torch.nn.Module):
        def __init__(self, d: int) -> None:
            super().__init__()
            g = torch.Generator().manual_seed(42)
            self.register_buffer("omega", torch.randn(d, d, generator=g))
            self.register_buffer("perm", torch.randperm(d, generator=torch.Generator().manual_seed(1)))
            self.register_buffer("pos", torch.arange(d).float())
            self.register_buffer("mask", torch.tril(torch.ones(d, d)))

    class NumpyGenerator(torch.nn.Module):
        def __init__(self, d: int) -> None:
            super().__init__()
            self.register_buffer("omega", torch.from_numpy(np.random.default_rng(0).standard_normal((d, d))))
            self.register_buffer("phase", torch.from_numpy(np.random.RandomState(7).uniform(0, 6.28, d)))

    class ForkedSeed(torch.nn.Module):
        def __init__(self, d: int) -> None:
            super().__init__()
            with torch.random.fork_rng():
                torch.manual_seed(3)
                self.register_buffer("omega", torch.randn(d, d))

    for model, want in ((TorchGenerator, ["omega", "perm"]), (NumpyGenerator, ["omega", "phase"]),
                        (ForkedSeed, ["omega"])):
        mod = types.SimpleNamespace(Model=model, get_init_inputs=lambda: [6])
        assert _probe._random_buffers(mod, model(6)) == want, model.__name__
    # the seeding is back afterwards
    assert np.random.default_rng(5).integers(0, 1 << 30) == np.random.default_rng(5).integers(0, 1 << 30)
    assert np.random.RandomState(5).randint(1 << 30) == np.random.RandomState(5).randint(1 << 30)
    assert isinstance(np.random.RandomState(5), np.random.RandomState)
    random.seed(4)
    a = random.random()
    random.seed(4)
    assert a == random.random()
    g1, g2 = torch.Generator().manual_seed(9), torch.Generator().manual_seed(9)
    assert torch.equal(torch.randn(4, generator=g1), torch.randn(4, generator=g2))


def test_randint_ranges_accept_numpy_integers() -> None:
    np = pytest.importorskip("numpy")
    assert _probe._randint_range([np.int64(3), np.int64(10), (4,)], {}) == [3, 9]
    assert _probe._randint_range([np.int32(512), (4,)], {}) == [0, 511]
    assert _probe._randint_range([True, (4,)], {}) is None


@needs_torch
def test_a_randint_draw_changed_in_place_keeps_its_samples_range(torch_restored: Any) -> None:
    torch = torch_restored

    def clamped() -> list[Any]:
        ids = torch.randint(0, 100, (16,))
        ids.clamp_(min=5)
        return [ids]

    def patched() -> list[Any]:
        ids = torch.randint(0, 100, (16,)).int()
        ids[ids < 5] = 5
        return [ids]

    def viewed_then_shifted() -> list[Any]:
        ids = torch.randint(0, 100, (4, 4))
        flat = ids.view(16)
        ids += 1  # the view shares the draw's version counter
        return [flat]

    for get_inputs in (clamped, patched, viewed_then_shifted):
        d = _probe._describe_inputs(types.SimpleNamespace(get_inputs=get_inputs))[0]
        assert "bounds" not in d and d["min"] >= 1, get_inputs.__name__


@needs_torch
def test_casts_views_and_randint_like_keep_the_draws_range(torch_restored: Any) -> None:
    torch = torch_restored
    mod = types.SimpleNamespace(get_inputs=lambda: [
        torch.randint(0, 1000, (64,)).int(),  # int32 ids
        torch.randint(0, 1000, (8, 8)).view(64),
        torch.randint_like(torch.zeros(64), 3, 1000).long(),
        torch.randint(1000, (64,), dtype=torch.int64).to(torch.int8),  # wraps: not the draw's values
        torch.randint(0, 1000, (64,)).float(),
        torch.randint(-1000, 1000, (64,)).view(torch.int32),  # the bytes read as int32: other values
    ])
    as_int, viewed, like, wrapped, as_float, reread = _probe._describe_inputs(mod)
    assert as_int["bounds"] == [0, 999] and as_int["dtype"] == "int32"
    assert viewed["bounds"] == [0, 999]
    assert like["bounds"] == [3, 999]
    assert "bounds" not in wrapped and "bounds" not in as_float and "bounds" not in reread


BN_DROPOUT = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features, out_features, p):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features)
        self.p = p

    def forward(self, x):
        return F.dropout(torch.relu(self.bn(self.fc(x))), self.p, training=self.training)


def get_inputs():
    return [torch.randn(32, 16)]


def get_init_inputs():
    return [16, 24, 0.25]
'''


@pytest.mark.slow  # the import runs the task in child processes
@needs_torch
def test_batchnorm_then_functional_dropout_is_refused_as_dropout(tmp_path: Path) -> None:
    task = tmp_path / "Gemm_BatchNorm_ReLU_Dropout.py"
    task.write_text(BN_DROPOUT, encoding="utf-8")
    with pytest.raises(TaskImportError) as err:
        _importer.import_task(task, tmp_path / "op")
    text = str(err.value)
    assert "dropout with p=0.25 in training mode" in text and "running_mean" not in text and "\n" not in text


@needs_torch
def test_a_randint_input_too_large_to_hold_keeps_the_draws_range(torch_restored: Any, monkeypatch: Any) -> None:
    """Inputs described from a cut run (above DESCRIBE_ELEMENTS) had their sample's range: the cut keeps randint's
    low / high, so its draw keeps the call's range there too."""
    torch = torch_restored
    monkeypatch.setattr(_probe, "DESCRIBE_ELEMENTS", 1 << 12)
    monkeypatch.setattr(_probe, "SAMPLE_ELEMENTS", 1 << 10)
    mod = types.SimpleNamespace(get_inputs=lambda: [torch.randint(0, 50000, (64, 128)), torch.randn(64, 128)])
    ids, x = _probe._describe_inputs(mod)
    assert ids["sampled"] and ids["shape"] == [64, 128] and ids["bounds"] == [0, 49999]
    assert "bounds" not in x
