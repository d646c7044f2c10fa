"""What lint says about a file that is not UTF-8 text: the encoding it is in, and how to re-save it.

Why: a kernel or golden.py saved as UTF-16 (Windows editors and PowerShell's ``>`` do this) was refused as
"UTF-16/32 byte-order mark" with the fix "fix the syntax error", a UTF-16 file without a byte-order mark as a
"syntax error: source code string cannot contain null bytes", and a Latin-1 file with the byte offset only (UX audit
s48/s49). The user has no syntax error to fix: the file needs re-saving, and the message now says in which encoding
it is and where the first offending byte is.
"""

from __future__ import annotations

from runtime.lint._registry import Hit

__all__ = ["RESAVE", "bytes_problem", "not_utf8", "nul_problem"]

RESAVE = "re-save the file as UTF-8 (in an editor: save with encoding UTF-8; in a shell: `iconv -f {enc} -t UTF-8`)"
"""The fix of every encoding finding; ``{enc}`` is the encoding the file is in, as iconv names it."""

_BOMS = (  # longest first: a UTF-32-LE mark starts with UTF-16-LE's
    (b"\xff\xfe\x00\x00", "UTF-32LE", "UTF-32 (little-endian)"),
    (b"\x00\x00\xfe\xff", "UTF-32BE", "UTF-32 (big-endian)"),
    (b"\xff\xfe", "UTF-16LE", "UTF-16 (little-endian)"),
    (b"\xfe\xff", "UTF-16BE", "UTF-16 (big-endian)"),
)


def _line_col(raw: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column of byte ``offset`` (columns in bytes, as the offending byte is not a character)."""
    line_start = raw.rfind(b"\n", 0, offset) + 1
    return raw.count(b"\n", 0, offset) + 1, offset - line_start + 1


def bytes_problem(raw: bytes, what: str = "kernel files") -> Hit | None:
    """A PF00 hit for bytes that are not UTF-8 text (a UTF-16/32 byte-order mark, an undecodable byte), else None.
    ``what``: the files that must be UTF-8, as the message names them."""
    for bom, iconv_name, words in _BOMS:
        if raw.startswith(bom):
            return Hit(f"the file is {words} text (it starts with the byte-order mark {bom.hex(' ').upper()}): "
                       f"{what} must be UTF-8", 1, 1, fix=RESAVE.format(enc=iconv_name))
    if raw.count(b"\x00") * 3 >= len(raw) > 0:  # decodable or not (an accented letter is not UTF-8 there)
        return _utf16_without_mark(raw.startswith(b"\x00"), what)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _line_col(raw, exc.start)
        byte = raw[exc.start:exc.start + 1].hex().upper()
        guess = "CP1252" if any(0x80 <= b < 0xA0 for b in raw) else "LATIN1"
        return Hit(f"not UTF-8 text: byte 0x{byte} at line {line} ({exc.reason}); the file is likely in a legacy "
                   f"8-bit encoding such as {guess.replace('LATIN1', 'Latin-1')}", line, col,
                   fix=RESAVE.format(enc=guess))
    return None


def _utf16_without_mark(big_endian: bool, what: str = "kernel files") -> Hit:
    order = "BE" if big_endian else "LE"
    return Hit(f"the file looks like UTF-16{order} text without a byte-order mark (every other byte is NUL): "
               f"{what} must be UTF-8", 1, 1, fix=RESAVE.format(enc=f"UTF-16{order}"))


def not_utf8(raw: bytes, what: str) -> str | None:
    """One line for a file that is not UTF-8 text, for the tools that read one outside lint (intake of SPEC.md,
    verify of a kernel): which encoding it is in, where, and how to re-save it; None when it is UTF-8. Why: they
    said only "is not UTF-8 text" / "cannot be read as UTF-8" (session 49 user walk)."""
    hit = bytes_problem(raw, what)
    return None if hit is None else f"{hit.message}; {hit.fix}"


def nul_problem(source: str) -> Hit | None:
    """A PF00 hit for NUL characters in decoded text (Python refuses them), naming UTF-16 without a byte-order mark
    when every other byte is NUL; else None."""
    if "\x00" not in source:
        return None
    if source.count("\x00") * 3 >= len(source):  # ASCII text in UTF-16: half the bytes are NUL
        return _utf16_without_mark(source.startswith("\x00"))
    offset = source.index("\x00")
    line = source.count("\n", 0, offset) + 1
    return Hit(f"a NUL character at line {line}: Python refuses source text holding one", line,
               offset - (source.rfind("\n", 0, offset) + 1) + 1, fix="delete the NUL character(s)")
