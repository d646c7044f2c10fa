"""BF16 on A2/A3: the emulator keeps a BF16 chain in FP32 and rounds where the real 0.2.0 compiler does.

The probe kernels (tests/toolchain/fixtures/bf16_promotion.py) are the ones whose compiled IR the real wheel shows
(tests/toolchain/test_bf16_promotion_real.py); here each one runs on the emulator and must equal, bit for bit, the
reference built from that IR's rule (runtime/emulator/device/_promote.py). The Ascend 950 (DAV_3510) rounds after
every op instead. Each reference is checked to differ from the other rounding on its inputs, so a test can fail.
"""

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import ml_dtypes
import numpy as np
import pytest

import runtime.emulator as emu

BF = ml_dtypes.bfloat16
F = np.float32
PROBES = Path(__file__).resolve().parents[1] / "toolchain" / "fixtures" / "bf16_promotion.py"


@pytest.fixture(scope="module")
def probes() -> ModuleType:
    emu.install()
    spec = importlib.util.spec_from_file_location("bf16_promotion_probes", PROBES)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def b(x: np.ndarray) -> np.ndarray:
    """Rounded to BF16 and widened back (exact)."""
    return np.asarray(x, F).astype(BF).astype(F)


def f(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(F)


def _ref_chain(x: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a2a3 = f(x) * f(c) - f(c) * f(c)
    per_op = b(b(f(x) * f(c)) - b(f(c) * f(c)))
    return a2a3, per_op


def _ref_local_tensors(x: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = f(x) * f(c)  # t[:] = v: not rounded
    u = b(f(x) + f(c))  # assemble into a local: rounded
    a2a3 = t - u * f(c)
    per_op = b(b(t) - b(u * f(c)))
    return a2a3, per_op


def _ref_cast_up(x: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sf = b(f(x) * f(c))  # the explicit cast rounds its promoted operand
    return sf * sf, sf * sf  # the same on both devices (the product is rounded before the cast either way)


def _ref_cube(x: np.ndarray, c: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rows = []
    per = []
    for i in range(2):
        a, bb = f(x[i * 32:(i + 1) * 32]), f(c[i * 32:(i + 1) * 32])
        q = np.matmul(b(a * bb), f(w))  # the cube reads BF16 operands; its result stays FP32 on A2/A3
        rows.append(q + bb)
        per.append(b(b(q) + bb))
    return np.concatenate(rows), np.concatenate(per)


def _ref_scalar(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s1, s2 = b(np.float32(0.1)), b(np.float32(0.3))  # BF16 Elements (the IR's SCALAR data_type BF16)
    return f(x) * s1 + s2, b(b(f(x) * s1) + s2)


REFS: dict[str, Callable[..., tuple[np.ndarray, np.ndarray]]] = {
    "chain": _ref_chain, "local_tensors": _ref_local_tensors, "cast_up": _ref_cast_up, "cube": _ref_cube,
    "scalar": _ref_scalar}


def _run(probes: ModuleType, name: str, npuarch: str) -> tuple[np.ndarray, list[np.ndarray]]:
    args = probes.inputs(name)
    with emu.session(options=emu.Options(npuarch=npuarch)) as s:
        probes.KERNELS[name](*args)
    assert not [d for d in s.diagnostics if d.severity == "error"], s.diagnostics
    return args[-1], args[:-1]


@pytest.mark.parametrize("name", sorted(REFS))
def test_a2a3_rounds_where_the_real_compiler_does(probes: ModuleType, name: str) -> None:
    out, ins = _run(probes, name, "DAV_2201")
    a2a3, per_op = REFS[name](*ins)
    expected = a2a3.astype(out.dtype)
    assert out.tobytes() == expected.tobytes(), f"{name}: {int((out != expected).sum())} elements differ"
    if name != "cast_up":
        assert expected.tobytes() != per_op.astype(out.dtype).tobytes(), "inputs that cannot tell the roundings apart"


@pytest.mark.parametrize("name", ["chain", "local_tensors", "scalar"])
def test_the_950_rounds_after_every_op(probes: ModuleType, name: str) -> None:
    out, ins = _run(probes, name, "DAV_3510")
    assert out.tobytes() == REFS[name](*ins)[1].astype(out.dtype).tobytes()


def test_promoted_poison_stays_poison_at_the_write() -> None:
    """Uninitialized memory held in FP32 still reads as poison after the BF16 rounding at the write (ml_dtypes
    alone would give the canonical NaN): a kernel that writes it into a BF16 output is still caught."""
    pypto = emu.install()

    @pypto.frontend.jit
    def leak(x: pypto.Tensor([8, 16], pypto.DT_BF16), out: pypto.Tensor([8, 16], pypto.DT_BF16)):
        pypto.set_vec_tile_shapes(8, 16)
        for _i in pypto.loop(1):
            t = pypto.tensor([8, 16], pypto.DT_BF16)
            pypto.assemble(pypto.view(x, [4, 16], [0, 0]), [0, 0], t)  # rows 4..7 of t are never written
            pypto.assemble(pypto.mul(pypto.view(t, [8, 16], [0, 0]), pypto.view(x, [8, 16], [0, 0])), [0, 0], out)

    x = np.ones((8, 16), BF)
    out = np.zeros((8, 16), BF)
    with emu.session(options=emu.Options(npuarch="DAV_2201")), pytest.raises(emu.EmulatorError) as e:
        leak(x, out)
    assert e.value.code == "EMU_POISON", e.value


def test_to_bf16_keeps_the_poison_payload() -> None:
    from runtime.emulator._buffers import is_poison, poison_array
    from runtime.emulator._numerics import to_bf16

    a = poison_array((6,), np.dtype(F))
    a[0], a[1] = 1.5, np.nan  # a value and a NaN that is not poison
    r = to_bf16(a)
    assert r.dtype == BF and float(r[0]) == 1.5 and is_poison(r) == 4
