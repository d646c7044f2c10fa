"""What a hostile candidate raises, returns or prints reaches the report as safe, bounded text, end to end
(red-team round s16): the runner survives any exception or result (it used to die in its own error handler and the
report said only "exited with code 1"), no terminal escape of the candidate's reaches the rendered report, the
JSON or the agents' view, and a kernel that reads its output's uninitialised prior contents is told so."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from verify_helpers import HOSTILE, make_op, settings

from runtime.verify import verify
from runtime.verify._render import render_report

HONEST = (HOSTILE / "honest_silu.py").read_text()
WRAPPER = '''def silu_wrapper(x):
    y = np.zeros_like(x)
    silu_kernel(x, y)
    return y
'''
assert WRAPPER in HONEST


def _candidate(prelude: str, wrapper: str = WRAPPER) -> str:
    return HONEST.replace(WRAPPER, prelude + "\n\n" + wrapper)


def _verify(tmp_path: Path, text: str):
    op = make_op(tmp_path, "silu", {"silu_impl.py": text})
    return verify(op, op / "silu_impl.py", settings=settings())


STR_RAISES = '''class KernelFault(Exception):
    def __str__(self):
        raise KernelFault()
'''
HUGE_CODE = '''class KernelFault(Exception):
    code = 7 ** 6000
'''
RAISE = '''def silu_wrapper(x):
    raise KernelFault("device fault")
'''
ROTTEN_RESULT = '''class Rotten(list):
    def __iter__(self):
        raise KernelFault("rotten")
'''
ODD_LEAF = '''class Meta(type):
    __name__ = property(lambda cls: 7 ** 6000)


class Odd(metaclass=Meta):
    pass
'''


@pytest.mark.parametrize(("prelude", "wrapper", "says"), [
    (STR_RAISES, RAISE, "KernelFault at silu_impl.py:"),
    (HUGE_CODE, RAISE, "KernelFault <an int of about 5071 digits> at silu_impl.py:"),
    (STR_RAISES + "\n\n" + ROTTEN_RESULT, WRAPPER.replace("return y", "return Rotten([y])"),
     "the wrapper's result could not be read: KernelFault"),
    (ODD_LEAF, WRAPPER.replace("return y", "return Odd()"), "output[0] is a Odd"),
], ids=["str-raises", "huge-int-code", "result-iteration-raises", "leaf-class-name-lies"])
def test_the_runner_reports_whatever_the_candidate_raises_or_returns(tmp_path: Path, prelude: str, wrapper: str,
                                                                     says: str) -> None:
    report = _verify(tmp_path, _candidate(prelude, wrapper))
    assert report.verdict not in ("PASS", "ERROR"), (report.verdict, report.reasons[:3])
    assert report.sandbox.status == "ok", (report.sandbox.reason, report.sandbox.stderr_tail[-800:])
    assert not any("before finishing" in r for r in report.reasons)
    assert any(says in r for r in report.reasons) or any(says in leaf.error for c in report.cases
                                                         for leaf in c.leaves if leaf.error), report.reasons[:3]
    if prelude == STR_RAISES:
        assert any("<exception message could not be rendered: str() raised KernelFault> device fault" in r
                   for r in report.reasons), report.reasons[:3]


FORGED = ("\\r\\x1b[2K\\x1b[1A\\x1b[2K[bold green]PASS[/bold green]  silu_impl.py  (final)\\n"
          "[link=file:///etc/passwd]x[/link] \\x1b[32mall cases ok\\x1b[0m"
          "\\x1b]8;;http://evil/\\x1b\\\\click\\x1b]8;;\\x1b\\\\ \\x9b2J \\u202e SSAP \\u2066x\\u2069")
ESCAPES = '''import sys


class KernelReport(Exception):
    pass
'''
FORGING_WRAPPER = f'''def silu_wrapper(x):
    sys.stderr.write("{FORGED}\\n")
    raise KernelReport("{FORGED}")
'''
RAW = ("\x1b", "\r", "\x9b", "\u202e", "\u2066", "\u2069")


def test_no_terminal_escape_of_the_candidates_reaches_the_report(tmp_path: Path) -> None:
    report = _verify(tmp_path, _candidate(ESCAPES, FORGING_WRAPPER))
    assert report.verdict == "FAIL_RUNTIME", report.reasons[:3]
    buf = io.StringIO()
    Console(file=buf, width=200, color_system=None, force_terminal=False).print(render_report(report))
    shown = buf.getvalue()
    texts = {"rendered": shown, "json": report.model_dump_json(), "agents": str(report.sanitized()),
             "reasons": "\n".join(report.reasons), "stderr": report.sandbox.stderr_tail}
    for where, text in texts.items():
        assert not [ch for ch in RAW if ch in text], where
    assert "\\x1b[2K\\x1b[1A" in report.reasons[0] and "\\u202e SSAP" in report.reasons[0]  # visible, readable
    assert "\\x1b[32mall cases ok" in report.sandbox.stderr_tail
    # the message's second line is indented under its bullet: it cannot pass for a line of the report
    assert "\n      [link=file:///etc/passwd]x[/link]" in shown.replace("│ ", "").replace("│", "")


def test_a_kernel_that_reads_its_outputs_prior_contents_is_told_so(tmp_path: Path) -> None:
    reads_y = HONEST.replace("        yf = xf * pypto.sigmoid(xf)\n",
                             "        old = pypto.view(y, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])\n"
                             "        yf = xf * pypto.sigmoid(xf) + pypto.cast(old, pypto.DT_FP32) * 0.0\n")
    # what np.empty leaves is whatever memory held before: here, deterministically, values nobody computed
    reads_y = reads_y.replace("    y = np.zeros_like(x)\n", "    y = np.empty_like(x)\n    y.reshape(-1)[::3] = 7.0\n")
    assert reads_y.count("old") == 2 and "np.empty_like" in reads_y
    report = _verify(tmp_path, reads_y)
    assert report.verdict == "FAIL_CHEAT", report.reasons[:3]
    assert any("argument 'y'" in r and "reads what this buffer held before the call" in r and "np.empty" in r
               for r in report.reasons), report.reasons[:3]
    assert not any("is host data" in r for r in report.reasons)



def test_a_refused_object_whose_repr_raises_is_still_a_recorded_denial(tmp_path: Path) -> None:
    """The audit hook names what it refuses with ``repr``; a socket whose ``__repr__`` raised made the hook raise
    the candidate's own exception (the socket was stopped, but nothing was recorded and the wrapper went on)."""
    wrapper = WRAPPER.replace("    y = np.zeros_like(x)\n", """    try:
        import _socket

        class Quiet(_socket.socket):
            def __repr__(self):
                raise KeyError("not telling")

        Quiet()
    except BaseException:
        pass
    y = np.zeros_like(x)
""")
    report = _verify(tmp_path, _candidate("", wrapper))
    assert report.verdict == "FAIL_CHEAT", report.reasons[:3]
    assert any(d.startswith("socket.__new__ (<unprintable>)") for d in report.sandbox.denied), report.sandbox.denied
