"""Sessions, cost counters (design point 6), records, errors as values, drop-in arrays (design point 7)."""

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import runtime.emulator as emu

pypto = emu.install()
F32 = np.float32
ROOT = Path(__file__).resolve().parents[2]


@pypto.frontend.jit
def tiles(x: pypto.Tensor([64, 32], pypto.DT_FP32), w: pypto.Tensor([32, 16], pypto.DT_FP32),
          out: pypto.Tensor([64, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 16)
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
    for i in pypto.loop(4):
        xt = pypto.view(x, [16, 32], [i * 16, 0])
        y = pypto.matmul(xt, w, pypto.DT_FP32)
        pypto.assemble(y + 1.0, [i * 16, 0], out)


def _args():
    r = np.random.default_rng(0)
    return r.random((64, 32)).astype(F32), r.random((32, 16)).astype(F32), np.zeros((64, 16), F32)


def test_cost_counters():
    x, w, out = _args()
    with emu.session() as s:
        tiles(x, w, out)
    c = s.counters
    assert c.ops == {"view": 4, "matmul": 4, "add": 4, "assemble": 4}
    assert c.loop_trips == {"loop_1": 4}
    assert c.matmul_flops == 2 * 64 * 16 * 32
    assert c.bytes_in == x.nbytes + 4 * w.nbytes  # the views of x, and w read whole by the matmul per iteration
    assert c.bytes_out == out.nbytes
    assert c.tiles == 4 * 1 + 4 * 1  # one 16x16 cube tile per matmul, one vec tile per add
    assert c.runs == 1
    np.testing.assert_allclose(out, x @ w + 1, rtol=1e-5)


def test_records_hold_every_op_output_per_iteration():
    x, w, out = _args()
    with emu.session(emu.Options(record=True)) as s:
        tiles(x, w, out)
    recs = s.records
    assert len(recs) == 16
    mm = [r for r in recs if r.op == "matmul"]
    assert [r.iteration for r in mm] == [{"loop_1": i} for i in range(4)]
    np.testing.assert_allclose(mm[2].value, x[32:48] @ w, rtol=1e-5)
    asm = [r for r in recs if r.op == "assemble"]
    assert asm[3].offsets == [48, 0] and asm[3].target == "out"
    assert mm[0].file.endswith("test_session.py") and mm[0].line is not None


def test_sessions_are_isolated_and_implicit_outside():
    x, w, out = _args()
    tiles(x, w, out)  # implicit session: nothing leaks
    assert emu.current_session() is None
    with emu.session() as a:
        tiles(x, w, out)
        with emu.session() as b:
            tiles(x, w, out)
        tiles(x, w, out)
    assert a.counters.runs == 2 and b.counters.runs == 1


def test_error_is_picklable_and_recorded_as_diagnostic():
    @pypto.frontend.jit
    def bad(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        y = x + 1.0

    with emu.session() as s, pytest.raises(emu.EmulatorError) as info:
        bad(np.zeros((4, 8), F32))
    e = info.value
    e2 = pickle.loads(pickle.dumps(e))
    assert (e2.code, e2.message, e2.file, e2.line, e2.op) == (e.code, e.message, e.file, e.line, e.op)
    d = e.to_diagnostic()
    assert d.severity == "error" and d.code == "F21004" and s.diagnostics == [d]


def test_bf16_arrays_are_written_in_place():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 16], pypto.DT_BF16), out: pypto.Tensor([4, 16], pypto.DT_BF16)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = x * 2.0

    x = np.arange(64, dtype=F32).reshape(4, 16).astype(ml_dtypes.bfloat16)
    out = np.zeros((4, 16), ml_dtypes.bfloat16)
    ident = id(out)
    k(x, out)
    assert id(out) == ident and (out.astype(F32) == x.astype(F32) * 2).all()


def test_torch_is_optional_and_not_imported(tmp_path):
    code = textwrap.dedent("""
        import sys, numpy as np
        import runtime.emulator as emu
        pypto = emu.install()
        @pypto.frontend.jit
        def k(x: pypto.Tensor([4, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(4, 8)
            out[:] = x + 1.0
        o = np.zeros((4, 8), np.float32)
        k(np.ones((4, 8), np.float32), o)
        assert (o == 2).all()
        print("torch" in sys.modules)
    """)
    script = tmp_path / "no_torch.py"
    script.write_text(code)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60,
                       cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


@pytest.mark.slow  # over ~6 s of a 2-core CI (session 21's budget cut; `make test-all` runs it)
def test_cli_runs_an_unmodified_script(tmp_path):
    script = tmp_path / "example.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import pypto

        @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
        def k(x: pypto.Tensor([4, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(4, 8)
            out[:] = pypto.exp(x)

        if __name__ == "__main__":
            x = np.zeros((4, 8), np.float32); o = np.zeros_like(x)
            k(x, o)
            assert (o == 1).all()
            print("ok")
    """))
    r = subprocess.run([sys.executable, "-m", "runtime.emulator", str(script)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
    bad = tmp_path / "bad.py"
    bad.write_text("import numpy as np\nimport pypto\n\n@pypto.frontend.jit\n"
                   "def k(x: pypto.Tensor([4, 8], pypto.DT_FP32)):\n    y = x + 1.0\n\n"
                   "k(np.zeros((4, 8), np.float32))\n")
    r = subprocess.run([sys.executable, "-m", "runtime.emulator", str(bad)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1
    assert "bad.py:6" in r.stderr and "F21004" in r.stderr and "Traceback" not in r.stderr


@pypto.frontend.jit
def flow(x: pypto.Tensor([8, 8], pypto.DT_FP32), out: pypto.Tensor([8, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    for i in pypto.loop(2):
        t = pypto.view(x, [4, 8], [i * 4, 0])
        e = pypto.exp(t) * 2.0
        s = pypto.sum(e, -1, keepdim=True)
        pypto.assemble(e / s, [i * 4, 0], out)


def test_records_carry_data_flow_links_names_and_attrs():
    x = np.random.default_rng(5).random((8, 8)).astype(F32)
    out = np.zeros_like(x)
    with emu.session(emu.Options(record=True)) as s:
        flow(x, out)
    recs = s.records
    assert [r.seq for r in recs] == list(range(len(recs)))
    by_op = {}
    for r in recs:
        by_op.setdefault(r.op, []).append(r)
    view1 = by_op["view"][1]
    assert view1.source == "x" and view1.inputs == [{"kind": "tensor", "name": "x"}]
    exp1, mul1 = by_op["exp"][1], by_op["mul"][1]
    assert exp1.inputs == [{"kind": "record", "seq": view1.seq}]
    assert mul1.inputs == [{"kind": "record", "seq": exp1.seq}] and mul1.name == "e"
    assert exp1.node == by_op["exp"][0].node and exp1.node != mul1.node  # one traced op, two ops on a line
    assert by_op["sum"][0].attrs == {"dim": 1, "keepdim": True}
    asm = by_op["assemble"][1]
    assert asm.target == "out" and asm.offsets == [4, 0] and asm.shape == [4, 8]
    assert asm.inputs == [{"kind": "record", "seq": by_op["div"][1].seq}]
    np.testing.assert_allclose(asm.value, out[4:8])
    assert s.kernel_args == [{"kernel": "flow", "args": [{"name": "x", "shape": [8, 8], "dtype": "fp32"},
                                                         {"name": "out", "shape": [8, 8], "dtype": "fp32"}]}]


class _FakeDevice:
    type = "cpu"


def _fake_torch_module():
    """A stand-in `torch` (torch is not installed here): CPU tensors that wrap a numpy buffer, like torch's
    `.numpy()` shares memory. Exercises the emulator's torch adapter without the real package."""
    import types

    mod = types.ModuleType("torch")
    mod.bfloat16, mod.float32, mod.int16 = "bfloat16", "float32", "int16"

    class Tensor:
        def __init__(self, arr, dtype):
            self._a, self.dtype, self.device = arr, dtype, _FakeDevice()

        def detach(self):
            return self

        def is_contiguous(self):
            return self._a.flags.c_contiguous

        def dim(self):
            return self._a.ndim

        def reshape(self, *shape):
            return Tensor(self._a.reshape(*shape), self.dtype)

        def view(self, dtype):
            assert dtype == "int16"
            return Tensor(self._a.view(np.int16), "int16")

        def numpy(self):
            return self._a

    Tensor.__module__ = "torch"
    mod.Tensor = Tensor
    return mod


def test_torch_cpu_tensors_are_written_back_in_place(monkeypatch):
    fake = _fake_torch_module()
    monkeypatch.setitem(sys.modules, "torch", fake)

    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 16], pypto.DT_BF16), out: pypto.Tensor([4, 16], pypto.DT_BF16),
          o32: pypto.Tensor([4, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = x + x
        o32[:] = pypto.cast(x, pypto.DT_FP32)

    base = np.arange(64, dtype=F32).reshape(4, 16)
    x = fake.Tensor(base.astype(ml_dtypes.bfloat16), "bfloat16")
    out = fake.Tensor(np.zeros((4, 16), ml_dtypes.bfloat16), "bfloat16")
    o32 = fake.Tensor(np.zeros((4, 16), F32), "float32")
    k(x, out, o32)
    assert (out.numpy().astype(F32) == (base * 2).astype(ml_dtypes.bfloat16).astype(F32)).all()
    assert (o32.numpy() == base).all()
    strided = fake.Tensor(np.zeros((4, 32), F32)[:, ::2], "float32")
    with pytest.raises(emu.EmulatorError, match="not all tensors are contiguous"):
        k(x, out, strided)
