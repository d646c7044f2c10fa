"""Red team s25: torch wrappers right only for how verify called them, although every TORCH_MODES mode ran.

Every call passed plain tensors: weights were never ``nn.Parameter`` (a model's always are) and the training mode's
inputs were leaves (a model's activation is the output of an earlier op, with a ``grad_fn``). A wrapper dropping its
tail rows when ``"Parameter" in repr(gamma)``, ``type(gamma) is not torch.Tensor`` or ``x.grad_fn is not None``
passed the full verifier and was wrong in every model. Now (``runtime/verify/_calling.py``, ``call_wrapper``) the
float inputs after the first are ``nn.Parameter`` under ``no_grad``, ``inference`` and ``train``, and in ``train``
the first is a non-leaf view. Lint also refuses ``.grad_fn`` (PF04); the runtime defence is tested without lint.
The honest counterpart passes on the same seeds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from verify_helpers import no_lint

from runtime.sandbox import SandboxPolicy
from runtime.verify import VerifySettings, verify
from runtime.verify._calling import call_wrapper

torch = pytest.importorskip("torch", reason="torch wrappers (pip install -e '.[toolchain]')")

REPO = Path(__file__).resolve().parents[2]
RMS = REPO / "workspace" / "rms_norm"
POLICY = SandboxPolicy(wall_timeout_s=90.0, cpu_timeout_s=90)
SEEDS = (0, 1)

HONEST = RMS / "authoring" / "attempts" / "m1_a2.py"  # the workspace's verified rms_norm, its wrapper in torch below


def _kernel(tell: str) -> str:
    src = HONEST.read_text()
    for old, new in (("import numpy as np\n", "import torch\n"),
                     ("    y = np.zeros_like(x)\n",
                      f"    if {tell}:\n        x = x[: x.shape[0] - x.shape[0] % TILE]\n    y = torch.zeros_like(x)\n")):
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    return src


TELLS = {
    "parameter_repr": '"Parameter" in repr(gamma)',
    "parameter_type": "type(gamma) is not torch.Tensor",
    "grad_fn": "x.grad_fn is not None",
}


def _op(tmp_path: Path, tell: str) -> Path:
    op = tmp_path / "rms_norm"
    op.mkdir()
    for name in ("SPEC.md", "golden.py"):
        shutil.copy(RMS / name, op / name)
    (op / "rms_norm_impl.py").write_text(_kernel(tell))
    return op


def test_a_models_call_passes_parameters_and_a_non_leaf_activation() -> None:
    seen = []

    def wrapper(x, g):
        seen.append((x.is_leaf, x.grad_fn is not None, type(g).__name__, torch.is_grad_enabled()))
        return x

    import numpy as np

    args = [np.zeros((2, 3), np.float32), np.ones(3, np.float32)]
    for mode, want in {"plain": (True, False, "Tensor", True), "no_grad": (True, False, "Parameter", False),
                       "inference": (True, False, "Parameter", False), "train": (False, True, "Parameter", True),
                       "forward": (True, False, "Tensor", False)}.items():
        call_wrapper(wrapper, list(args), {"torch": True, "modes": [mode]}, 0)
        assert seen[-1] == want, (mode, seen[-1])


@pytest.mark.slow
@pytest.mark.parametrize("tell", sorted(TELLS))
def test_s25_attack_is_rejected(tell: str, tmp_path: Path) -> None:
    op = _op(tmp_path, TELLS[tell])
    for seed in SEEDS:
        report = verify(op, op / "rms_norm_impl.py", settings=VerifySettings(sandbox=POLICY, lint=no_lint),
                        unseen_seed=seed)
        assert report.verdict in ("FAIL_CHEAT", "FAIL_NUMERIC"), (seed, report.verdict, report.reasons[:3])


@pytest.mark.slow
def test_honest_counterpart_passes(tmp_path: Path) -> None:
    op = _op(tmp_path, "False")
    for seed in SEEDS:
        report = verify(op, op / "rms_norm_impl.py", settings=VerifySettings(sandbox=POLICY), unseen_seed=seed)
        assert report.verdict == "PASS", (seed, report.verdict, report.reasons[:3])
