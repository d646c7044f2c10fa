"""Every workspace kernel and every gym-style corpus kernel gives the same bytes through the program codec.

Why: the device process executes ``decode(encode(program))``, so the codec must be exact on the kernels the
project actually verifies, not only on the acceptance corpus. Each workspace op's kernel is the one its
shipped trace delivers (replayed into a scratch copy: slow), each gym-style corpus op's is its ``*_impl.py``
in the op dir the gym import makes (needs torch, like tests/gym). The wrapper runs on every SPEC case with a kernel executor that runs each
kernel call directly and through the codec and compares output bytes, counters, warnings and errors.
"""

import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_program_codec import Dual

import runtime.emulator as emu
from runtime.emulator import _executor

ROOT = Path(__file__).resolve().parents[2]
WORKSPACE_OPS = sorted(p.name for p in (ROOT / "workspace").iterdir()
                       if (p / "traces" / "default" / "manifest.json").is_file())
GYM_CORPUS = ROOT / "tests" / "gym" / "corpus_data"
GYM_OPS = sorted(p.name for p in GYM_CORPUS.iterdir() if (p / "SPEC.md").is_file())


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _run_cases(op_dir: Path, impl: Path, tag: str) -> int:
    """Call the op's wrapper on every SPEC case under the dual executor; returns the kernel calls compared."""
    from runtime.opdir import load_op_dir
    from runtime.verify._calling import call_wrapper, imports_torch

    emu.install()
    op = load_op_dir(op_dir)
    name = op.spec.op_name
    sys.path.insert(0, str(impl.parent))
    try:
        mod = _load(impl, f"roundtrip_{tag}_{name}")
    finally:
        sys.path.remove(str(impl.parent))
    wrapper = getattr(mod, f"{name}_wrapper", None) or getattr(mod, name)
    params = inspect.signature(wrapper).parameters
    kwargs = {k: v for k, v in op.spec.attrs.items() if k in params}
    torch_io = imports_torch(impl.read_text(encoding="utf-8"))
    dual = Dual()
    with _executor.use(dual), emu.session() as s:
        for case in op.cases():
            call_wrapper(wrapper, [np.asarray(a) for a in op.make_inputs(case)], {"kwargs": kwargs, "torch": torch_io})
    assert not s.errors, s.errors
    return dual.calls


@pytest.mark.slow
@pytest.mark.parametrize("op", WORKSPACE_OPS)
def test_workspace_kernel_round_trips_bit_identically(op: str, tmp_path: Path) -> None:
    from orchestrator import api

    scratch = api.copy_op_inputs(ROOT / "workspace" / op, tmp_path / op)
    result = api.run(scratch)
    assert result.status == "delivered", result.status
    impls = sorted(scratch.glob("*_impl.py"))
    assert len(impls) == 1, impls
    assert _run_cases(scratch, impls[0], "ws") > 0


@pytest.mark.slow
@pytest.mark.parametrize("op", GYM_OPS)
def test_gym_corpus_kernel_round_trips_bit_identically(op: str, tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="the gym-style corpus goldens and wrappers are torch (like tests/gym)")
    from orchestrator.adapters.gym import import_gym_op

    import_gym_op(GYM_CORPUS / op, tmp_path / op)  # the op dir `python -m orchestrator import` makes
    assert _run_cases(tmp_path / op, tmp_path / op / f"{op}_impl.py", "gym") > 0
