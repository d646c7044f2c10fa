"""Red team s40 (``tests/redteam/test_round29_s40.py``): how verification calls a wrapper - its training calls'
weights and the type of its float attributes.

Every training call had fresh weights that require grad, so a layer norm passing gamma for beta when ``x.requires_grad
and not gamma.requires_grad`` (LoRA / adapter fine-tuning freezes the norm weights) or when ``gamma.grad is not None``
(gradient accumulation) passed every verification; every attribute was a Python float or int, so a softcap using the
SPEC's cap when ``isinstance(cap, np.generic)`` (a cap computed as ``1 / np.sqrt(d)``) did too.
"""

from __future__ import annotations

import numpy as np
import pytest

from runtime.emulator import _lower
from runtime.verify._calling import (
    TORCH_MODES,
    WEIGHT_STATES,
    call_wrapper,
    draw_scalar_types,
    draw_torch_modes,
    draw_weight_states,
)


@pytest.mark.parametrize("seed", [0, 11, 12345, 2**62 + 5])
def test_training_calls_see_every_weight_state_and_other_calls_fresh_weights(seed: int) -> None:
    modes = draw_torch_modes(seed, 30)
    states = draw_weight_states(seed, modes)
    assert states == draw_weight_states(seed, modes)  # seeded: a replay calls the same way
    train = [s for m, s in zip(modes, states, strict=True) if m == "train"]
    assert len(train) >= 3 and set(train) == set(WEIGHT_STATES)
    assert all(s == "fresh" for m, s in zip(modes, states, strict=True) if m != "train")
    assert draw_torch_modes(seed, 30) == modes  # the modes' own stream is untouched


@pytest.mark.parametrize("seed", [0, 11, 12345])
def test_half_of_the_calls_pass_float_attributes_as_numpy_float64(seed: int) -> None:
    kinds = draw_scalar_types(seed, 31)
    assert kinds == draw_scalar_types(seed, 31) and kinds.count("numpy") == 15 and set(kinds) == {"numpy", "python"}


def test_call_wrapper_passes_numpy_float64_attributes_with_the_same_value() -> None:
    seen: list[tuple[object, object, object]] = []

    def wrapper(x: np.ndarray, cap: float, bounds: list[float], steps: int) -> np.ndarray:
        seen.append((cap, bounds, steps))
        return x

    calling = {"kwargs": {"cap": 30.0, "bounds": [0.0, 6.0], "steps": 3}, "scalars": ["python", "numpy"]}
    for i in range(2):
        call_wrapper(wrapper, [np.zeros((2, 2), np.float32)], calling, run_index=i)
    (c0, b0, s0), (c1, b1, s1) = seen
    assert type(c0) is float and type(c1) is np.float64 and c0 == c1 == 30.0
    # a list keeps its Python floats: torch.tensor of np.float64 leaves is float64, of floats float32
    assert [type(v) for v in b1] == [float, float] and b1 == b0 == [0.0, 6.0]
    assert type(s0) is int and type(s1) is int  # ints stay Python ints (vendor wrappers assert isinstance(k, int))


@pytest.mark.parametrize("state", WEIGHT_STATES)
def test_training_weights_are_fresh_frozen_or_hold_a_gradient(state: str) -> None:
    torch = pytest.importorskip("torch")
    seen = []

    def wrapper(x, gamma):  # noqa: ANN001, ANN202 - a wrapper as written
        seen.append((x.requires_grad, isinstance(gamma, torch.nn.Parameter), gamma.requires_grad, gamma.grad))
        return x

    calling = {"torch": True, "modes": ["train"], "weights": [state]}
    call_wrapper(wrapper, [np.ones((2, 4), np.float32), np.ones(4, np.float32)], calling, run_index=0)
    (x_grad, is_param, g_grad, g_dot_grad), = seen
    assert x_grad and is_param
    assert g_grad == (state != "frozen")
    assert (g_dot_grad is not None) == (state == "grad")
    assert "train" in TORCH_MODES


def test_a_numpy_float64_scalar_travels_in_a_kernel_program_as_the_float_it_is() -> None:
    """pybind11 takes an ``np.float64`` as the double a Python float is: the two calls send one program."""
    v = _lower._number(np.float64(30.0), "scalar", _lower._Lowering())
    assert type(v) is float and v == 30.0
    kept = _lower._number(np.float32(0.5), "scalar", _lower._Lowering())
    assert type(kept) is np.float32  # other numpy scalars keep their type, as before
