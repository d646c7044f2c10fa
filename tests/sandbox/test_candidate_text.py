"""What the candidate raises or returns is turned into text and JSON without ever crashing the runner, and that
text is safe to show when it reaches the host (red-team round s16: a ``__str__`` that raises and a 5000-digit int
``code`` killed the runner inside its own error handler; ESC sequences in an exception message rewrote the FAIL
banner as PASS in a real terminal)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from runtime.arrays import dumps_arrays
from runtime.sandbox import SandboxPolicy
from runtime.sandbox import _runner as runner
from runtime.sandbox._exec import _collect
from runtime.sandbox._proc import ProcResult
from runtime.sandbox._wire import frame

TERMINAL_TRICKS = ("\r\x1b[2K\x1b[1A\x1b[2K PASS \x1b]8;;http://evil/\x1b\\click\x1b]8;;\x1b\\ \x9b2J \x07\x08 "
                   "\u202e SSAP \u2066x\u2069 \u200f")
FORBIDDEN = ("\x1b", "\r", "\x9b", "\x07", "\x08", "\u202e", "\u2066", "\u2069", "\u200f")


def _clean(text: str) -> bool:
    return not any(ch in text for ch in FORBIDDEN)


# ------------------------------------------------------------------------------------------ the runner's records


class StrRaises(Exception):
    def __str__(self) -> str:
        raise StrRaises()


class HugeCode(Exception):
    code = 7 ** 6000  # more digits than Python's int -> str limit (4300)


class IntSub(int):
    def __str__(self) -> str:
        raise RuntimeError("no")

    __repr__ = __str__


class StrSub(str):
    def __getitem__(self, item):  # noqa: ANN001
        raise RuntimeError("no")


class Bail(BaseException):
    """Not an ``Exception``: what a plain ``except Exception`` guard lets through."""


class WeirdAttrs(Exception):
    line = IntSub(7 ** 600)
    op = StrSub("op-name")

    @property
    def code(self):  # noqa: ANN201
        raise Bail

    @property
    def file(self):  # noqa: ANN201
        raise SystemExit(3)


class Meta(type):
    __name__ = property(lambda cls: 7 ** 6000)  # type: ignore[assignment]


class NameLies(Exception, metaclass=Meta):
    def __str__(self) -> str:
        return StrSub("a message in a str subclass")


class ClassRaises(Exception):
    @property
    def __class__(self):  # noqa: ANN204
        raise RuntimeError("isinstance reads me")


def _raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:  # noqa: BLE001
        return caught


@pytest.mark.parametrize(("make", "type_name", "message"), [
    (lambda: StrRaises(), "StrRaises", "<exception message could not be rendered: str() raised StrRaises>"),
    (lambda: StrRaises("the args survive"), "StrRaises",
     "could not be rendered: str() raised StrRaises> the args survive"),
    (lambda: HugeCode("device fault"), "HugeCode", "device fault"),
    (lambda: WeirdAttrs("w"), "WeirdAttrs", "w"),
    (lambda: NameLies(), "NameLies", "a message in a str subclass"),
    (lambda: ClassRaises("c"), "ClassRaises", "c"),
], ids=["str-raises", "str-raises-with-args", "huge-int-code", "attributes-raise", "metaclass-name", "class-raises"])
def test_anything_the_candidate_raises_is_described_and_encoded(make, type_name: str, message: str) -> None:  # noqa: ANN001
    # the exceptions are made here, not passed in: pytest's own failure report cannot print some of them
    exc = make()
    info = runner._describe_error(_raised(exc))
    assert info["type"] == type_name and message in info["message"]
    back = json.loads(runner._to_json({"case": "c0", "run": 0, "error": info}))
    assert back["error"]["type"] == type_name
    assert all(type(v) in (str, int) and len(str(v)) < 2100 for v in back["error"].values())
    if type(exc) is HugeCode:
        assert back["error"]["code"] == "<an int of about 5071 digits>"
    if type(exc) is WeirdAttrs:
        assert back["error"]["line"] == "<an int of about 508 digits>"  # 7 ** 600, through its subclass
        assert back["error"]["op"] == "op-name" and "code" not in back["error"]
    assert not runner._is_a(_raised(ClassRaises()), ValueError)
    del exc


def test_records_with_objects_json_cannot_write_are_still_written() -> None:
    record = {"case": "c0", "run": 0, "error": None, "counters": {"runs": 2, 3: np.int64(5), "t": np.float64(0.5)},
              "output_kinds": [runner._type_name(NameLies())], "big": 7 ** 6000, "odd": IntSub(3),
              "nested": [(1, 2)], "other": object()}
    back = json.loads(runner._to_json(record))
    assert back["counters"] == {"runs": 2, "3": "5", "t": 0.5}
    assert back["output_kinds"] == ["NameLies"] and back["big"].startswith("<an int of about")
    assert back["odd"] == 3 and back["nested"] == [[1, 2]] and back["other"].startswith("<object object")


def test_an_unreadable_result_fails_the_call_and_says_why() -> None:
    class Rotten(list):
        def __iter__(self):  # noqa: ANN204
            raise StrRaises("rotten")

    from runtime.verify import _calling

    entry: dict = {"case": "c0", "run": 0, "error": None}
    with pytest.raises(StrRaises):
        runner._host_outcome(entry, Rotten([np.zeros(2)]), runner._KernelLog(), _calling, np, None)
    runner._unreadable_result(entry, _raised(StrRaises("rotten")))
    assert entry["error"]["type"] == "StrRaises"
    assert entry["error"]["message"].startswith("the wrapper's result could not be read: StrRaises: <exception")
    assert "n_outputs" not in entry


# ------------------------------------------------------------------------------------------ the host boundary


def test_safe_text_escapes_terminal_controls_and_bidi_overrides_visibly() -> None:
    from runtime.sandbox._text import safe_text

    got = safe_text("ok\n\tline " + TERMINAL_TRICKS + " \ud800")
    assert _clean(got) and got.startswith("ok\n\tline \\x0d\\x1b[2K\\x1b[1A") and "\\u202e SSAP" in got
    assert got.endswith("?") and safe_text(got) == got  # encodable, idempotent
    assert safe_text("a\nb\tc", one_line=True) == "a\\x0ab\\x09c"
    assert safe_text("plain text, [bold]markup[/bold] and unicode: \u00e9\u4e2d") == \
        "plain text, [bold]markup[/bold] and unicode: \u00e9\u4e2d"


def _res(channel: bytes, stderr: bytes = b"", denials: list[str] | None = None) -> ProcResult:
    return ProcResult(returncode=0, timed_out=False, duration_s=0.1, isolation="process-only", channel=channel,
                      stderr=stderr, denials=denials or [])


LAYR = frame(b"LAYR", b'{"socket_guard": true, "audit_hook": true, "rlimits": true}')
DONE = frame(b"DONE", b"")


def _collect_it(channel: bytes, **kw):
    return _collect(_res(channel, **kw), SandboxPolicy(), "process-only", "", Path("/nonexistent"), plan=["c0"])


def test_candidate_text_is_made_safe_where_it_enters_the_host() -> None:
    error = {"type": "Bad\x1b[2KType\nX", "message": "line one\n" + TERMINAL_TRICKS, "file": "k\u202e.py", "line": 3}
    case = frame(b"CASE", json.dumps({"case": "c0", "run": 0, "error": error, "n_outputs": 0,
                                      "denied": ["open-read /tmp/\x1b[1Ax"], "output_kinds": []}).encode())
    arrs = frame(b"ARRS", dumps_arrays({"arg_0": np.zeros(2, np.float32)}))
    run = _collect_it(LAYR + case + arrs + DONE, stderr=b"oops \x1b[31mred\x1b[0m\n", denials=["open-read \x9bx"])
    assert not run.protocol_violation
    got = run.runs[0].record["error"]
    assert got["type"] == "Bad\\x1b[2KType\\x0aX" and got["message"].startswith("line one\n\\x0d\\x1b[2K")
    assert got["file"] == "k\\u202e.py" and got["line"] == 3
    assert all(_clean(t) for t in (*got.values(), run.stderr_tail, *run.denied) if isinstance(t, str))
    assert "open-read /tmp/\\x1b[1Ax" in run.denied and "oops \\x1b[31mred" in run.stderr_tail

    impe = frame(b"IMPE", json.dumps({"import_error": error, "denied": []}).encode())
    run = _collect_it(LAYR + impe + DONE)
    assert run.status == "import_error" and _clean(run.reason) and "\\x1b[2K" in run.reason


@pytest.mark.parametrize(("name", "record"), [
    ("nested too deeply", b'{"case": "c0", "run": 0, "deep": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
    ("n_outputs infinite", b'{"case": "c0", "run": 0, "error": null, "n_outputs": Infinity}'),
    ("error not an object", b'{"case": "c0", "run": 0, "error": "boom"}'),
    ("duration not a number", b'{"case": "c0", "run": 0, "error": null, "duration_s": "slow"}'),
    ("kernel errors not objects", b'{"case": "c0", "run": 0, "error": null, "kernel_errors": [1]}'),
])
def test_a_forged_record_the_verifier_cannot_read_is_a_violation_never_a_crash(name: str, record: bytes) -> None:
    arrs = frame(b"ARRS", dumps_arrays({"out_0": np.zeros(2, np.float32)}))
    run = _collect_it(LAYR + frame(b"CASE", record) + arrs + DONE)
    assert run.protocol_violation, name


# ------------------------------------------------------------------------------------------ the device's reason


class _Param:
    def __init__(self, written: bool) -> None:
        self.written = written


def test_an_unexplained_buffer_the_kernel_reads_and_writes_is_named_for_what_it_likely_is() -> None:
    from runtime.sandbox._device import _unexplained

    label = "argument 'y' of kernel 'k' (kernel call 1)"
    both = _unexplained(label, _Param(True), write_only=False)
    assert "reads what this buffer held before the call" in both and "np.empty" in both and "np.zeros" in both
    read_only = _unexplained(label, _Param(False), write_only=False)
    assert "host data" in read_only and "never written" in read_only
