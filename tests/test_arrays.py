"""The one array format (runtime.arrays): every process boundary and every array file of the project uses it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from runtime.arrays import (
    ArrayWriter,
    decode_array,
    dumps_arrays,
    encode_array,
    load_arrays,
    loads_arrays,
    open_arrays,
    save_arrays,
)

REPO = Path(__file__).resolve().parents[1]


def _sample() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"z_last": rng.standard_normal((3, 4)).astype(ml_dtypes.bfloat16),
            "a_first": np.ones(5, dtype=ml_dtypes.float8_e4m3fn),
            "strided": np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2],  # not C-contiguous
            "scalar": np.array(2.5, dtype=np.float16), "flags": np.array([True, False])}


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert list(a) == list(b)  # key order is data-flow order for golden intermediates
    for k in a:
        assert b[k].dtype == a[k].dtype and b[k].shape == a[k].shape
        assert np.ascontiguousarray(b[k]).tobytes() == np.ascontiguousarray(a[k]).tobytes()


def test_file_and_bytes_round_trip_keep_dtypes_shapes_and_order(tmp_path: Path) -> None:
    arrays = _sample()
    save_arrays(tmp_path / "x.npz", arrays)
    _same(arrays, load_arrays(tmp_path / "x.npz"))
    _same(arrays, loads_arrays(dumps_arrays(arrays)))


def test_a_writer_file_is_the_same_format_read_whole_or_by_group(tmp_path: Path) -> None:
    """The golden run's files: arrays added one at a time under "<case>/<name>", read by load_arrays or a reader."""
    arrays = _sample()
    with ArrayWriter(tmp_path / "w.npz") as w:
        for i in (1, 11):  # "1/" must not pick up case 11's keys
            for k, v in arrays.items():
                w.add(f"{i}/{k}", v)
    whole = load_arrays(tmp_path / "w.npz")
    assert list(whole) == [f"{i}/{k}" for i in (1, 11) for k in arrays]
    with open_arrays(tmp_path / "w.npz") as r:
        assert "11/scalar" in r and "2/scalar" not in r
        _same(arrays, r.group("1/"))
        _same(arrays, r.group("11/"))
        with pytest.raises(KeyError):
            r["nope"]
    with ArrayWriter(tmp_path / "dup.npz") as w, pytest.raises(ValueError, match="twice"):
        w.add("a", np.zeros(1))
        w.add("a", np.zeros(1))
    with pytest.raises(ValueError, match="reserved"), ArrayWriter(tmp_path / "res.npz") as w:
        w.add("__dtypes__", np.zeros(1))


def test_a_writer_never_closed_and_a_missing_file_are_value_errors(tmp_path: Path) -> None:
    w = ArrayWriter(tmp_path / "torn.npz")
    w.add("a", np.zeros(4))  # a producer killed here leaves no zip directory
    w._zip.fp.flush()  # type: ignore[union-attr]
    with pytest.raises(ValueError), open_arrays(tmp_path / "torn.npz"):
        pass
    with pytest.raises(ValueError, match="missing.npz"), open_arrays(tmp_path / "missing.npz"):
        pass
    np.savez(tmp_path / "plain.npz", a=np.zeros(2))
    with pytest.raises(ValueError, match="dtype table"), open_arrays(tmp_path / "plain.npz"):
        pass


def test_json_form_round_trips_and_keeps_the_b64_field_bisect_budgets_on() -> None:
    for v in _sample().values():
        enc = encode_array(v)
        assert enc is not None and set(enc) == {"dtype", "shape", "b64"}
        back = decode_array(json.loads(json.dumps(enc)))
        assert back is not None and back.dtype == v.dtype and back.tobytes() == np.ascontiguousarray(v).tobytes()
        assert back.flags.writeable
    assert encode_array(None) is None and decode_array(None) is None


@pytest.mark.parametrize("payload", [b"", b"not a zip", b"PK\x03\x04 torn"])
def test_foreign_bytes_are_a_value_error_never_a_crash(payload: bytes) -> None:
    with pytest.raises(ValueError):
        loads_arrays(payload)


def test_a_plain_npz_without_the_dtype_table_and_a_missing_file_are_refused(tmp_path: Path) -> None:
    np.savez(tmp_path / "plain.npz", a=np.zeros(2))
    with pytest.raises(ValueError, match="dtype table"):
        load_arrays(tmp_path / "plain.npz")
    with pytest.raises(ValueError, match="missing.npz"):
        load_arrays(tmp_path / "missing.npz")


def test_the_owner_imports_no_pydantic_or_yaml() -> None:
    """The golden child, the sandbox runner and the user's pypto interpreter import it: numpy + ml_dtypes only."""
    code = ("import sys; import runtime.arrays; "
            "print(sorted(m for m in ('pydantic', 'yaml', 'agents', 'orchestrator') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_no_other_module_writes_or_reads_npz_itself() -> None:
    """One definition: np.savez / np.load on array files appear only in runtime/arrays.py."""
    offenders = []
    for pkg in ("runtime", "agents", "orchestrator"):
        for path in (REPO / pkg).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if ("np.savez" in text or "np.load(" in text) and path.name != "arrays.py":
                offenders.append(str(path.relative_to(REPO)))
    assert offenders == []


def test_a_reader_maps_stored_members_copy_on_write(tmp_path: Path) -> None:
    """open_arrays maps uncompressed members instead of reading them through zipfile (a CRC pass and a copy: most of
    a deep AdamW golden run's load): the same bytes, writable like a loaded array, a write never reaches the file,
    and the arrays outlive the file (the golden run's directory is removed after reading)."""
    import mmap
    import zipfile

    arrays = _sample()
    big = np.arange(1 << 16, dtype=np.float32).reshape(256, 256)
    with ArrayWriter(tmp_path / "w.npz") as w:
        for k, v in arrays.items():
            w.add(k, v)
        w.add("big", big)
    with open_arrays(tmp_path / "w.npz") as r:
        got = {k: r[k] for k in arrays}
        b = r["big"]
    _same(arrays, got)
    base = b
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    assert isinstance(base, mmap.mmap)  # mapped, not read
    assert b.flags.writeable
    b[0, 0] = -1.0
    (tmp_path / "w.npz").unlink()
    assert b[0, 0] == -1.0 and np.array_equal(b[1:], big[1:])
    with ArrayWriter(tmp_path / "w2.npz") as w:
        w.add("big", big)
    with open_arrays(tmp_path / "w2.npz") as r:
        c = r["big"]
        c += 1
    with open_arrays(tmp_path / "w2.npz") as r:
        assert np.array_equal(r["big"], big)  # the file is unchanged
    # a compressed member (another writer) is read the usual way, same values
    with zipfile.ZipFile(tmp_path / "w2.npz") as src, \
            zipfile.ZipFile(tmp_path / "z.npz", "w", compression=zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))
    with open_arrays(tmp_path / "z.npz") as r:
        z = r["big"]
    assert np.array_equal(z, big) and not isinstance(z.base, mmap.mmap)
