"""Intake of SPEC.md and verify of a kernel say which encoding a non-UTF-8 file is in, as lint does (session 49).

The user walk of session 49: lint named a UTF-16 kernel's encoding and how to re-save it, while intake said only
"SPEC.md: is not UTF-8 text" and verify "cannot be read as UTF-8 Python source ('utf-8' codec can't decode ...)"."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.opdir import OpDirError
from runtime.opdir._spec import load_spec
from runtime.verify._target import TargetError, plan_target


def test_intake_names_the_encoding_of_a_utf16_spec(tmp_path: Path) -> None:
    spec = tmp_path / "SPEC.md"
    spec.write_text("---\nop_name: silu\n---\n# silu\n", encoding="utf-16")  # with its byte-order mark
    with pytest.raises(OpDirError) as err:
        load_spec(spec)
    text = str(err.value)
    assert "UTF-16 (little-endian)" in text and "SPEC.md files must be UTF-8" in text
    assert "iconv -f UTF-16LE -t UTF-8" in text


def test_intake_names_a_latin1_byte_and_its_line(tmp_path: Path) -> None:
    spec = tmp_path / "SPEC.md"
    spec.write_bytes("---\nop_name: silu\n---\n# caf\u00e9\n".encode("latin-1"))
    with pytest.raises(OpDirError) as err:
        load_spec(spec)
    assert "byte 0xE9 at line 4" in str(err.value) and "Latin-1" in str(err.value)


def test_verify_names_the_encoding_of_a_utf16_kernel(tmp_path: Path) -> None:
    kernel = tmp_path / "silu_impl.py"
    kernel.write_bytes("import pypto\n".encode("utf-16-le"))  # no byte-order mark: every other byte is NUL
    with pytest.raises(TargetError) as err:
        plan_target(tmp_path, kernel, "silu", ["x"], ["y"])
    text = str(err.value)
    assert text.startswith("silu_impl.py: the file looks like UTF-16LE text without a byte-order mark"), text
    assert "iconv -f UTF-16LE -t UTF-8" in text


def test_verify_names_the_encoding_of_a_utf16_kernel_with_its_mark(tmp_path: Path) -> None:
    kernel = tmp_path / "silu_impl.py"
    kernel.write_text("import pypto\n", encoding="utf-16")
    with pytest.raises(TargetError) as err:
        plan_target(tmp_path, kernel, "silu", ["x"], ["y"])
    assert "UTF-16 (little-endian)" in str(err.value) and "kernel files must be UTF-8" in str(err.value)
