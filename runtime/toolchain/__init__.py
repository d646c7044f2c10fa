"""A second opinion from the real PyPTO compiler (pypto 0.2.0, ``RunMode.SIM``) and its cost model.

Optional: used when an interpreter with the real ``pypto`` (+ torch, sympy) is configured
(``pip install -e '.[toolchain]'`` into this venv, or ``--pypto-python`` / ``$PTO_FORGE_PYPTO_PYTHON``
naming another venv). It never decides a verdict (only ``runtime.verify`` does): it says whether the real
compiler accepts a kernel, where it rejects it, and how many cycles its cost model simulates. Usage::

    from runtime.toolchain import compile_kernel
    res = compile_kernel("workspace/silu", "workspace/silu/silu_impl.py")
    res.status, res.cost.total_cycles, res.error

CLI: ``python -m runtime.toolchain <op_dir> <kernel> [--json]``. See docs/toolchain.md.
"""

from runtime.toolchain._engine import (
    ENV_VAR,
    ScriptOutcome,
    ToolchainUsageError,
    compile_kernel,
    find_pypto_python,
    run_scripts,
)
from runtime.toolchain._launch import Limits
from runtime.toolchain._models import CompileError, CostFigures, PipeUsage, ShapeResult, ToolchainResult

__all__ = [
    "ENV_VAR",
    "CompileError",
    "CostFigures",
    "Limits",
    "PipeUsage",
    "ScriptOutcome",
    "ShapeResult",
    "ToolchainResult",
    "ToolchainUsageError",
    "compile_kernel",
    "find_pypto_python",
    "run_scripts",
]
