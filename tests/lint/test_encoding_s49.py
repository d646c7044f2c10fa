"""PF00 on a file that is not UTF-8 names its encoding and how to re-save it (UX audit s48/s49).

It said ``UTF-16/32 byte-order mark: kernel files must be UTF-8`` with the fix "fix the syntax error" (a UTF-16
file has no syntax error), ``syntax error: source code string cannot contain null bytes`` for UTF-16 without a
byte-order mark, and only a byte offset for a Latin-1 file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from runtime.lint import lint_paths

SOURCE = "import pypto\n# café\n\ndef f(x):\n    return x\n"


def _pf00(path: Path) -> tuple[str, str, int]:
    findings = [f for f in lint_paths([str(path)], stage="module") if f.rule_id == "PF00"]
    assert len(findings) == 1, findings
    return findings[0].message, findings[0].fix, findings[0].line


@pytest.mark.parametrize(("encoding", "words", "iconv"), [
    ("utf-16", "UTF-16 (little-endian)", "UTF-16LE"),  # Python writes the platform's (little-endian) order
    ("utf-16-be", "", "UTF-16BE"),
    ("utf-32", "UTF-32 (little-endian)", "UTF-32LE"),
])
def test_a_byte_order_mark_names_the_encoding(tmp_path: Path, encoding: str, words: str, iconv: str) -> None:
    path = tmp_path / "k.py"
    data = SOURCE.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
        words = "UTF-16 (big-endian)"
    path.write_bytes(data)
    message, fix, _ = _pf00(path)
    assert words in message and "must be UTF-8" in message
    assert "syntax" not in fix and "re-save the file as UTF-8" in fix and f"iconv -f {iconv} -t UTF-8" in fix


def test_utf16_without_a_mark_is_not_a_syntax_error(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_bytes(SOURCE.encode("utf-16-le"))
    message, fix, _ = _pf00(path)
    assert "UTF-16LE" in message and "without a byte-order mark" in message and "syntax" not in message
    assert "iconv -f UTF-16LE" in fix


def test_a_legacy_8bit_file_names_the_line_of_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_bytes(SOURCE.encode("latin-1"))
    message, fix, line = _pf00(path)
    assert "byte 0xE9 at line 2" in message and "Latin-1" in message and line == 2
    assert "iconv -f LATIN1" in fix


def test_one_nul_is_named_where_it_is(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_bytes(b"import pypto\nx = 1\x00\n")
    message, fix, line = _pf00(path)
    assert "NUL character at line 2" in message and line == 2 and "UTF-16" not in message
    assert "delete" in fix


def test_the_cli_shows_the_fix_and_no_raw_nul(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_bytes(SOURCE.encode("utf-16-le"))
    done = subprocess.run([sys.executable, "-m", "runtime.lint", str(path)], capture_output=True, timeout=60)
    out = done.stdout.decode()
    assert done.returncode == 2 and "\x00" not in out and "fix: re-save the file as UTF-8" in out
    js = subprocess.run([sys.executable, "-m", "runtime.lint", "--json", str(path)], capture_output=True, timeout=60)
    assert "re-save" in json.dumps(json.loads(js.stdout))


def test_utf8_with_a_mark_still_lints(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_bytes(b"\xef\xbb\xbf" + SOURCE.encode())
    assert not [f for f in lint_paths([str(path)], stage="module") if f.rule_id == "PF00"]
