"""Fixtures shared by the KernelBench import tests."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def torch_restored(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The probe's ``.cuda()`` shim patches torch in the process that loads a task: undo it after the test."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.Tensor, "cuda", torch.Tensor.cuda)
    monkeypatch.setattr(torch.nn.Module, "cuda", torch.nn.Module.cuda)
    return torch
