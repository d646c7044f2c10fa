"""The device executor imports no tracing code: numpy, ml_dtypes and the emulator's leaf modules only.

Why: in verification the device process runs kernel programs sent by the sandboxed child; if the device
imported the tracer, the frontend or anything that interprets kernel Python, a hostile program could reach
code that runs candidate-controlled Python, and the separation would be nominal. Two checks: the device
package's own imports (read with ``ast``, including function-local ones) stay inside an allow-list, and a
fresh interpreter that imports the device package, decodes a program and executes it has loaded none of the
forbidden modules.
"""


import ast
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEVICE = ROOT / "runtime" / "emulator" / "device"

ALLOWED_PREFIXES = ("numpy", "ml_dtypes", "runtime.emulator.device")
ALLOWED_EXACT = {
    "runtime.dtypes", "runtime.testmodes",
    # the emulator's leaf modules (no tracing, no kernel Python): errors, enums, numerics, poison
    "runtime.emulator._errors", "runtime.emulator._enums", "runtime.emulator._numerics", "runtime.emulator._buffers",
    # device._blas: BLAS thread control, looked up only where the environment does not pin one thread - never in a
    # verification's device process (env_policy pins it); no kernel Python
    "threadpoolctl",
}
FORBIDDEN_LOADED = (
    "runtime.emulator._trace", "runtime.emulator._trace_interp", "runtime.emulator._frontend",
    "runtime.emulator._methods", "runtime.emulator._module", "runtime.emulator._tensor", "runtime.emulator._symbolic",
    "runtime.emulator._ops_core", "runtime.emulator._ops_math", "runtime.emulator._lower", "runtime.emulator._executor",
    "runtime.emulator._torch_npu", "runtime.emulator._options", "torch", "pypto",
)


def _stdlib(name: str) -> bool:
    return name.split(".")[0] in sys.stdlib_module_names or name == "__future__"


def device_imports(folder: Path = DEVICE) -> list[tuple[str, str, int]]:
    """(module file, imported module, line) for every import statement of the device package."""
    out = []
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                out += [(path.name, a.name, node.lineno) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = "runtime.emulator.device" + (f".{base}" if base else "")
                out.append((path.name, base, node.lineno))
                if base in ("runtime.emulator", "runtime"):  # `from runtime.emulator import _x`
                    out += [(path.name, f"{base}.{a.name}", node.lineno) for a in node.names]
    return out


def disallowed(imports: list[tuple[str, str, int]]) -> list[str]:
    bad = []
    for file, mod, line in imports:
        if _stdlib(mod) or mod in ALLOWED_EXACT or mod.startswith(ALLOWED_PREFIXES):
            continue
        if mod in ("runtime.emulator", "runtime"):
            continue  # the names imported from it are checked one by one above
        bad.append(f"{file}:{line} imports {mod}")
    return bad


def test_device_package_imports_only_leaves() -> None:
    imports = device_imports()
    assert len(imports) > 20, "the scan found the device sources"
    assert disallowed(imports) == []


def test_the_check_can_fail(tmp_path: Path) -> None:
    (tmp_path / "_bad.py").write_text("import torch\nfrom runtime.emulator import _trace\n\ndef f():\n"
                                      "    from runtime.emulator._frontend import jit\n")
    assert disallowed(device_imports(tmp_path)) == ["_bad.py:1 imports torch", "_bad.py:2 imports runtime.emulator._trace",
                                                    "_bad.py:5 imports runtime.emulator._frontend"]


def test_a_device_process_loads_no_tracing_code(tmp_path: Path) -> None:
    """Encode a program here, then decode and execute it in a fresh interpreter that imports the device only."""
    import numpy as np

    import runtime.emulator as emu
    from runtime.emulator.device import encode

    pypto = emu.install()

    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        n = x.shape[0]
        for i in pypto.loop(pypto.ceildiv(n, 8)):
            t = pypto.view(x, [8, 16], [i * 8, 0], valid_shape=[(n - i * 8).min(8), 16])
            pypto.assemble(pypto.exp(t) + 1.0, [i * 8, 0], y)

    x = np.arange(20 * 16, dtype=np.float32).reshape(20, 16) / 100
    (tmp_path / "prog.bin").write_bytes(encode(k.program(x, np.zeros_like(x))))
    np.save(tmp_path / "x.npy", x)
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        from runtime.emulator.device import decode, execute
        x = np.load({str(tmp_path / "x.npy")!r}); y = np.zeros_like(x)
        res = execute(decode(open({str(tmp_path / "prog.bin")!r}, "rb").read()), [x, y])
        assert res.error is None and res.written == [1], res
        assert np.array_equal(y, (np.exp(x) + np.float32(1.0)).astype(np.float32))
        bad = [m for m in {FORBIDDEN_LOADED!r} if m in sys.modules]
        print("LOADED", bad)
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "LOADED []" in r.stdout, r.stdout
