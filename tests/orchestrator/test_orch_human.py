"""The human at the gate (issue #14), tested with real processes: the gate race between two terminals, the
prompt in a pseudo-terminal, broken goldens refused before any agent runs, failures that are not the kernel's
stopping the run, Ctrl-C / SIGTERM / a closed pipe leaving nothing behind, delivered op dirs, ``show``."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from orch_helpers import events

DRIVER = Path(__file__).parent / "orch_cli_driver.py"
ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


def _env(tmp: Path | None = None, verifier: str = "double", **extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160", "FORGE_TEST_VERIFIER": verifier,
           "PYTHONUNBUFFERED": "1", **extra}
    if tmp is not None:
        env["TMPDIR"] = str(tmp)
    return env


def cli_proc(*args: str, verifier: str = "double", tmp: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(DRIVER), *args], capture_output=True, text=True, timeout=timeout,
                          env=_env(tmp, verifier), cwd=ROOT)


class Terminal:
    """A CLI process whose stdin/stdout is a pipe or a pseudo-terminal; ``expect`` waits for text."""

    def __init__(self, args: list[str], *, tty: bool, verifier: str = "double", tmp: Path | None = None) -> None:
        self.buf = ""
        if tty:
            master, slave = pty.openpty()
            self.proc = subprocess.Popen([sys.executable, str(DRIVER), *args], stdin=slave, stdout=slave,
                                         stderr=slave, env=_env(tmp, verifier, TERM="xterm"), cwd=ROOT,
                                         start_new_session=True)
            os.close(slave)
            self.rfd, self.wfd = master, master
        else:
            self.proc = subprocess.Popen([sys.executable, str(DRIVER), *args], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=_env(tmp, verifier),
                                         cwd=ROOT)
            self.rfd, self.wfd = self.proc.stdout.fileno(), self.proc.stdin.fileno()

    def expect(self, pattern: str, timeout: float = 60) -> str:
        """Read until ``pattern`` (regex) shows up in the output since the last match; returns that output."""
        deadline = time.monotonic() + timeout
        while True:
            plain = ANSI.sub("", self.buf)
            m = re.search(pattern, plain)
            if m:
                self.buf = plain[m.end():]
                return plain[:m.end()]
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {pattern!r}; output so far:\n{plain[-3000:]}")
            ready, _, _ = select.select([self.rfd], [], [], min(left, 0.5))
            if ready:
                try:
                    chunk = os.read(self.rfd, 65536)
                except OSError:
                    chunk = b""
                if not chunk and self.proc.poll() is not None:
                    raise AssertionError(f"process ended (rc {self.proc.returncode}) before {pattern!r}:\n"
                                         f"{plain[-3000:]}")
                self.buf += chunk.decode("utf-8", "replace")

    def send(self, line: str) -> None:
        os.write(self.wfd, (line + "\n").encode())

    def finish(self, timeout: float = 60) -> int:
        try:
            deadline = time.monotonic() + timeout
            while self.proc.poll() is None and time.monotonic() < deadline:  # drain, or a full pty blocks it
                if select.select([self.rfd], [], [], 0.2)[0]:
                    try:
                        self.buf += os.read(self.rfd, 65536).decode("utf-8", "replace")
                    except OSError:
                        break
            return self.proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        finally:
            for fd in {self.rfd, self.wfd}:
                try:
                    os.close(fd)
                except OSError:
                    pass


# ---------------------------------------------------------------------------------------------- gate race

@pytest.mark.slow  # CLI processes end to end
def test_decision_from_a_second_terminal_is_refused_while_the_first_asks(op_copy, script):
    """Issue #14 finding 1: `approve` from a second terminal used to answer a gate being asked elsewhere and
    then silently approve the redesign's gate. Now it is refused while the live process holds the gate."""
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl.py"]}, design=[("DESIGN.md", "module_interfaces.yaml")] * 2)
    first = Terminal(["run", str(op), "--approve", "prompt", "--agents", f"scripted:{s}"], tty=False)
    first.expect(r"gate design #1")
    first.expect(r"decision .*> ")
    second = cli_proc("approve", str(op))
    assert second.returncode == 1
    assert "in another terminal" in second.stderr and "answer at its prompt there" in second.stderr
    assert "Traceback" not in second.stderr
    st = cli_proc("status", str(op))
    assert "open at an interactive prompt" in st.stdout
    first.send("reject")
    first.expect(r"note.*> ")
    first.send("split the affine map")
    first.expect(r"gate design #2")  # the redesign is a new gate instance
    first.expect(r"decision .*> ")
    assert cli_proc("approve", str(op)).returncode == 1  # still refused: nothing can land on design #2 from here
    first.send("a")
    first.expect(r"gate final #3")
    first.expect(r"decision .*> ")
    first.send("approve")
    assert first.finish() == 0
    decided = [(e["gate"], e["decision"], e["source"]) for e in events(op, _only_run(op)) if e["kind"] == "resume"]
    assert decided == [("design", "reject", "human"), ("design", "approve", "human"), ("final", "approve", "human")]
    assert (op / "affine_impl.py").is_file()


def _only_run(op: Path) -> str:
    runs = sorted(p.name[len("run-"):] for p in (op / ".forge").glob("run-*"))
    assert len(runs) == 1
    return runs[0]


# ------------------------------------------------------------------------------------------ pseudo-terminal

@pytest.mark.slow  # CLI processes end to end
def test_prompt_in_a_pseudo_terminal_reasks_typos_and_confirms_abort(op_copy, script):
    """Finding 2 in a real terminal: `?`, `y`, `hitn` are not decisions; `abort` needs a yes; raise_budget asks N."""
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl_numeric.py", "impl_numeric.py", "impl.py"]})
    term = Terminal(["run", str(op), "--approve", "prompt", "--budget", "1", "--agents", f"scripted:{s}"], tty=True)
    term.expect(r"gate design #1")
    term.expect(r"decision .*> ")
    for typo in ("?", "y", "yes"):
        term.send(typo)
        term.expect(r"is not an answer at this gate")
    term.send("Approve")
    term.expect(r"gate blocked #2")
    screen = term.expect(r"decision .*> ")
    assert "attempt budget 1 exhausted" in screen and "raise_budget" in screen
    term.send("hitn")
    term.expect(r"is not an answer at this gate")
    term.send("r")  # reject is not an answer at the blocked gate
    term.expect(r"is not an answer at this gate")
    term.send("abort")
    term.expect(r"abort the run\?.*> ")
    term.send("no")
    term.expect(r"not aborted; choose again")
    term.expect(r"decision .*> ")
    term.send("raise_budget")
    term.expect(r"how many more attempts\? \[5\] > ")  # the default is shown
    term.send("one")
    term.expect(r"a whole number of attempts")
    term.send("1")
    term.expect(r"note for the agents.*> ")
    term.send("")
    term.expect(r"gate blocked #3")  # the second attempt fails too: a new blocked gate
    term.expect(r"decision .*> ")
    term.send("hint")
    term.expect(r"hint for the agents > ")
    term.send("")
    term.expect(r"a note is required here")
    term.send("use the numeric reference")
    term.expect(r"gate final #4")
    term.expect(r"decision .*> ")
    term.send("a")
    assert term.finish() == 0
    run = _only_run(op)
    decided = [e["decision"] for e in events(op, run) if e["kind"] == "resume"]
    assert decided == ["approve", "raise_budget:1", "hint", "approve"]


# ---------------------------------------------------------------------------------------- broken goldens

BROKEN = {
    "raises": ("def golden(x):\n    raise ZeroDivisionError('boom')\n", "ZeroDivisionError"),
    "wrong_shape": ("import numpy as np\ndef golden(x):\n    return x[:1]\n", "SPEC.md declares"),
    "nan": ("import numpy as np\ndef golden(x):\n    return (x * np.nan).astype(x.dtype)\n", "NaN"),
    "endless": ("def golden(x):\n    while True:\n        pass\n", "did not finish"),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_run_refuses_a_broken_golden_before_any_agent(op_copy, script, kind, monkeypatch, capsys):
    """Finding 3: `run` refuses what `intake` refuses, with its messages, and writes nothing."""
    from orchestrator import api
    from orchestrator.cli.main import main

    monkeypatch.setattr(api, "INTAKE_TIMEOUT_S", 0.5)
    op = op_copy("affine")
    header = (op / "golden.py").read_text().split('"""')[0]
    body, expected = BROKEN[kind]
    (op / "golden.py").write_text(header + body)
    s = script("affine", implement={1: ["impl.py"]})
    code = main(["run", str(op), "--approve", "auto", "--agents", f"scripted:{s}"])
    err = capsys.readouterr().err
    assert code == 1 and "intake refused" in err and expected in err and "Traceback" not in err
    assert not (op / ".forge").exists() and not (op / "DESIGN.md").exists()  # no agent ran, nothing written


def test_sizes_that_cannot_fit_are_an_intake_error(op_copy, script, capsys):
    """Finding 4: 7 TiB of inputs is one clear line in `intake`, `run` and `runtime.verify`, never numpy's
    _ArrayMemoryError traceback."""
    from orchestrator.cli.main import main
    from runtime.verify.__main__ import main as verify_main

    op = op_copy("affine")
    spec = (op / "SPEC.md").read_text()
    huge = spec.replace("  - {B: 16, D: 32}\n", "  - {B: 1048576, D: 2097152}\n")  # 8 TiB of fp32 in x
    assert huge != spec
    (op / "SPEC.md").write_text(huge)
    assert main(["intake", str(op)]) == 1
    err = capsys.readouterr().err
    assert "this machine has" in err and "use smaller shapes" in err and "Traceback" not in err
    s = script("affine", implement={1: ["impl.py"]})
    assert main(["run", str(op), "--approve", "auto", "--agents", f"scripted:{s}"]) == 1
    err = capsys.readouterr().err
    assert "use smaller shapes" in err and "Traceback" not in err
    shutil.copy(Path(__file__).parent / "fixtures" / "agents" / "affine" / "impl.py", op / "affine_impl.py")
    code = verify_main([str(op), str(op / "affine_impl.py")])
    out = capsys.readouterr()
    assert code != 0 and "use smaller shapes" in out.out + out.err and "Traceback" not in out.out + out.err


def test_read_only_op_dir_is_one_clear_line(op_copy, script, tmp_path):
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed: no way to make a read-only mount without root tricks")
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl.py"]})
    cmd = ["bwrap", "--bind", "/", "/", "--ro-bind", str(op), str(op), "--dev", "/dev", "--proc", "/proc",
           sys.executable, str(DRIVER), "run", str(op), "--approve", "auto", "--agents", f"scripted:{s}"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=_env(), cwd=ROOT)
    if "bwrap:" in p.stderr and p.returncode != 1:
        pytest.skip(f"bwrap cannot create namespaces here: {p.stderr.strip()[:200]}")
    assert p.returncode == 1 and "is read-only" in p.stderr
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr
    # one line for the mistake (the sandbox notice, when bwrap cannot nest inside this bwrap, is not about it)
    assert len([ln for ln in p.stderr.splitlines() if ln.strip() and not ln.startswith("warning: no OS sandbox")]) == 1


# ------------------------------------------------------------------------------- not the candidate's fault

def test_golden_failure_during_verify_stops_the_run_and_never_reaches_the_debugger(op_copy, script):
    from orch_support import make_verifier

    from orchestrator import api
    from orchestrator.adapters.scripted import ScriptedAgents

    op = op_copy("affine")
    s = script("affine", implement={1: ["impl.py"]})
    agents = ScriptedAgents(s)
    verifier = make_verifier("real")
    r = api.run(op, api.RunOptions(approve="stop", run_id="t1"),
                inject=api.Injected(agents=agents, verifier=verifier))
    assert r.gate.gate == "design"
    good = (op / "golden.py").read_text()
    (op / "golden.py").write_text(good.replace("    return y", "    raise RuntimeError('golden broke')"))
    api.approve(op)
    r = api.resume(op, approve="auto", inject=api.Injected(agents=agents, verifier=verifier))
    assert r.status == "stopped" and "golden.py" in r.cause and "golden broke" in r.cause
    assert not [c for c in agents.calls if c[0] == "debug"]  # never sent to the debugger
    assert r.modules[0].verdict is None  # no verdict recorded against the kernel
    st = api.status(op)
    assert st.status == "stopped" and "golden broke" in st.cause
    (op / "golden.py").write_text(good)
    r = api.resume(op, approve="auto", inject=api.Injected(agents=agents, verifier=verifier))
    assert r.status == "delivered"
    assert [m.attempts for m in r.modules] == [1]  # the stop cost no attempt


def test_auto_mode_failure_ends_with_its_cause(op_copy, script, cli):
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl_numeric.py"] * 2})
    p = cli("run", str(op), "--approve", "auto", "--budget", "2", "--agents", f"scripted:{s}")
    assert p.returncode == 1
    assert "aborted: M1: attempt budget 2 exhausted (FAIL_NUMERIC)" in p.stdout
    assert "approval mode auto aborts at the blocked gate" in p.stdout


# --------------------------------------------------------------------------------------- signals and pipes

def _children_of(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rfind(")") + 2:].split()[1]) == pid:
                out.append(int(d.name))
    return out


def _alive_matching(text: str) -> list[int]:
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
                state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if text in cmd and state != "Z":
                found.append(int(d.name))
    return found


SLOW_GOLDEN = '''
import pathlib
import time

def _maybe_slow():
    if (pathlib.Path(__file__).parent / "slow.flag").exists():
        time.sleep(120)
'''


@pytest.mark.slow  # CLI processes end to end
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_verify_leaves_no_process_and_no_temp_dir(op_copy, script, tmp_path, sig):
    """Finding 5: Ctrl-C or SIGTERM during verify used to leave the golden child at 100% CPU and forge-golden-*
    dirs behind. Now the run ends at once, cleanly, and resumes."""
    op = op_copy("affine")
    src = (op / "golden.py").read_text()
    (op / "golden.py").write_text(src.replace("def golden(x):", SLOW_GOLDEN + "\n\ndef golden(x):\n    _maybe_slow()"))
    s = script("affine", implement={1: ["impl.py"]})
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    assert cli_proc("run", str(op), "--approve", "stop", "--agents", f"scripted:{s}", tmp=tmp).returncode == 0
    assert cli_proc("approve", str(op)).returncode == 0
    (op / "slow.flag").write_text("")
    proc = subprocess.Popen([sys.executable, str(DRIVER), "resume", str(op), "--approve", "auto"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(tmp, "real"), cwd=ROOT)
    deadline = time.monotonic() + 60
    golden = []
    while time.monotonic() < deadline and not golden:
        golden = [p for p in _alive_matching("_golden_child.py") if p in _all_descendants(proc.pid)]
        time.sleep(0.1)
    assert golden, "the verification never started a golden child"
    os.kill(proc.pid, sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + int(sig) if sig != signal.SIGINT else proc.returncode == 130
    assert "resume" in err and "Traceback" not in err
    time.sleep(0.2)
    assert not [p for p in golden if p in _alive_matching("_golden_child.py")], "golden child left running"
    assert list(tmp.iterdir()) == [], f"temp dirs left behind: {list(tmp.iterdir())}"
    (op / "slow.flag").unlink()
    if sig == signal.SIGTERM:  # resumability once is enough (each real verification costs seconds)
        r = cli_proc("resume", str(op), "--approve", "auto", verifier="real", tmp=tmp)
        assert r.returncode == 0 and "delivered" in r.stdout


def _all_descendants(pid: int) -> set[int]:
    seen, todo = set(), [pid]
    while todo:
        p = todo.pop()
        for c in _children_of(p):
            if c not in seen:
                seen.add(c)
                todo.append(c)
    return seen


@pytest.mark.slow  # CLI processes end to end
def test_run_piped_into_head_ends_cleanly_and_resumes(op_copy, script, tmp_path):
    """Finding 5: `run ... | head -1` used to kill the run silently. Now it stops cleanly, says so on stderr,
    and `resume` finishes it."""
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl.py"]})
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    cmd = (f"{sys.executable} {DRIVER} run {op} --approve auto --agents scripted:{s} 2>{tmp_path / 'err'} | head -1;"
           " echo rc=${PIPESTATUS[0]}")
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120, env=_env(tmp, "real"),
                       cwd=ROOT)
    err = (tmp_path / "err").read_text()
    assert "rc=141" in p.stdout, (p.stdout, err)
    assert "output pipe was closed" in err and "resume" in err and "Traceback" not in err
    assert list(tmp.iterdir()) == []
    st = json.loads(cli_proc("status", str(op), "--json").stdout)
    assert st["status"] == "interrupted"
    r = cli_proc("resume", str(op), "--approve", "auto", verifier="real", tmp=tmp)
    assert r.returncode == 0 and "delivered" in r.stdout


# ---------------------------------------------------------------------------------- delivered op dirs, show

def test_run_on_a_delivered_op_dir_refuses_without_fresh(op_copy, script, cli):
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl.py"]})
    assert cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}").returncode == 0
    again = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}")
    assert again.returncode == 1 and "artifacts of an earlier run" in again.stderr and "--fresh" in again.stderr
    assert "DESIGN.md" in again.stderr  # the earlier run's design is not taken for the user's
    fresh = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}", "--fresh")
    assert fresh.returncode == 0
    runs = sorted((op / ".forge").glob("run-*"))
    second = json.loads((runs[-1] / "run.json").read_text())
    assert second["user_files"] == {}  # the design it found was the first run's, moved away, not the user's
    assert [e for e in events(op, runs[-1].name[4:]) if e.get("node") == "design"]  # the designer ran again


def test_run_again_after_a_stop_points_to_resume_before_fresh(op_copy, script, cli):
    """A user whose run stopped (a gate with --approve stop here; Ctrl-C or kill -9 alike) and who types `run`
    again was told only "pass --fresh", which starts over and drops the progress: the refusal names `resume`."""
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl.py"]})
    assert cli("run", str(op), "--approve", "stop", "--agents", f"scripted:{s}").returncode != 1
    again = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}")
    assert again.returncode == 1 and "artifacts of an earlier run" in again.stderr
    assert f"resume {op}" in " ".join(again.stderr.split()) and "--fresh" in again.stderr
    resumed = cli("resume", str(op), "--approve", "auto")
    assert resumed.returncode == 0 and "delivered" in resumed.stdout


def test_a_design_the_user_provided_is_kept_and_used(op_copy, script, cli):
    from orch_support import AGENTS

    op = op_copy("affine")
    for name in ("DESIGN.md", "module_interfaces.yaml"):
        shutil.copy(AGENTS / "affine" / name, op / name)
    s = script("affine", implement={1: ["impl.py"]})
    assert cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}").returncode == 0
    again = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}", "--fresh")
    assert again.returncode == 0
    assert (op / "DESIGN.md").is_file()  # the user's design stays
    moved = {p.name for p in (op / ".forge" / "previous").glob("*/*")}
    assert "affine_impl.py" in moved and "DESIGN.md" not in moved


def test_show_renders_a_stored_report(op_copy, script, cli):
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl_numeric.py", "impl.py"]})
    assert cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}", verifier="real").returncode == 0
    last = cli("show", str(op), "--last")
    assert last.returncode == 0 and "PASS" in last.stdout and "max diff" in last.stdout
    reports = sorted((op / ".forge").glob("run-*/reports/*.json"))
    failing = next(p for p in reports if json.loads(p.read_text())["verdict"] == "FAIL_NUMERIC")
    shown = cli("show", str(op), failing.stem[:10])
    assert shown.returncode == 0 and "FAIL_NUMERIC" in shown.stdout and "out of tolerance" in shown.stdout
    assert cli("show", str(op), "zzzz").returncode == 1


def test_gate_screens_show_what_a_reviewer_needs(op_copy, script, cli):
    """Finding 6: design gate = decomposition, interfaces, rationale, diff against the rejected design; blocked
    gate = the actual cause; module gate = case table, code diff, diagnosis, coverage audit rows."""
    op = op_copy("sqrecip")
    s = script("sqrecip", implement={1: ["m1_numeric.py", "m1_numeric.py", "m1.py"], 2: ["m12.py"], 3: ["m123.py"]},
               design=[("DESIGN_v1.md", "module_interfaces.yaml"), ("DESIGN.md", "module_interfaces.yaml")])
    assert cli("run", str(op), "--approve", "stop", "--budget", "2", "--agents", f"scripted:{s}").returncode == 0
    design = cli("show", str(op), "--gate").stdout
    for part in ("gate design #1", "decomposition", "interfaces (module_interfaces.yaml)", "sq float32[B, D]",
                 "rationale (DESIGN.md)", "module_count = 3"):
        assert part in design, part
    assert "diff against" not in design  # nothing was rejected yet
    assert cli("reject", str(op), "--note", "retitle it").returncode == 0
    assert cli("resume", str(op)).returncode == 0
    redesign = cli("show", str(op), "--gate").stdout
    assert "gate design #2" in redesign and "diff against the design shown at gate #1" in redesign
    assert "-# sqrecip design (first draft)" in redesign and "+# sqrecip design" in redesign
    assert cli("approve", str(op)).returncode == 0
    assert cli("resume", str(op), verifier="real").returncode == 0
    blocked = cli("show", str(op), "--gate").stdout
    assert "gate blocked #3" in blocked and "attempt budget 2 exhausted (FAIL_NUMERIC)" in blocked
    assert "cause (last verify report)" in blocked and "out of tolerance, max_diff" in blocked
    assert "scripted diagnosis" in blocked  # the debugger's diagnosis of the failed attempt
    assert cli("approve", str(op), "--choice", "hint", "--note", "square it").returncode == 0
    assert cli("resume", str(op), verifier="real").returncode == 0
    module = cli("show", str(op), "--gate").stdout
    for part in ("gate module #4", "(module 1)", "B21_D32-fp32-s0-offset", "max diff", "out-of-tol",
                 "code: new file modules/sqrecip_module1_impl.py", "+        sqt = xt * xt",
                 "debugger's diagnosis", "golden coverage audit"):
        assert part in module, part


# ---------------------------------------------------------------------------------------------- fresh race

def _approve_until_done(term: Terminal, timeout: float = 120) -> int:
    """At a gate prompt: approve it and every later gate until the process ends; its exit code."""
    deadline = time.monotonic() + timeout
    term.send("a")
    while time.monotonic() < deadline:
        try:
            term.expect(r"decision .*> ", timeout=max(1.0, deadline - time.monotonic()))
        except AssertionError:
            break  # the process ended (delivered) or stopped asking
        term.send("a")
    return term.finish()


@pytest.mark.slow  # CLI processes end to end
def test_a_fresh_run_cannot_move_a_live_runs_files(op_copy, script):
    """Issue #28 finding 1: `run --fresh` while another run on the op dir was in progress moved the live run's
    DESIGN.md, module_interfaces.yaml and MEMORY.md to .forge/previous/ and only then said "in progress"; the
    live run still printed "delivered" with no design files left. Now the lock comes first: nothing moves."""
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl.py"]})
    agents = f"scripted:{s}"
    assert cli_proc("run", str(op), "--approve", "auto", "--agents", agents).returncode == 0  # an earlier run
    live = Terminal(["run", str(op), "--approve", "prompt", "--fresh", "--agents", agents], tty=False)
    live.expect(r"gate design #1")
    live.expect(r"decision .*> ")  # the live run waits at its design gate, holding the op dir's run lock
    previous = sorted(p.name for p in (op / ".forge" / "previous").iterdir())
    design = {n: (op / n).read_bytes() for n in ("DESIGN.md", "module_interfaces.yaml", "MEMORY.md")}
    assert len(previous) == 1  # the live run moved the earlier run's artifacts, nothing else did
    second = cli_proc("run", str(op), "--approve", "auto", "--fresh", "--agents", agents)
    assert second.returncode == 1 and "a run is already in progress" in second.stderr, second.stderr
    assert sorted(p.name for p in (op / ".forge" / "previous").iterdir()) == previous
    assert {n: (op / n).read_bytes() for n in design} == design  # the live run's files are where it left them
    assert _approve_until_done(live) == 0, live.buf
    assert "delivered affine_impl.py" in live.buf, live.buf
    for name in ("DESIGN.md", "module_interfaces.yaml", "MEMORY.md", "affine_impl.py", "README.md"):
        assert (op / name).is_file(), name
    audit = cli_proc("audit", str(op))
    assert audit.returncode == 0 and "OK" in audit.stdout


@pytest.mark.slow  # CLI processes end to end
def test_two_fresh_runs_started_together_one_runs_the_other_is_refused(op_copy, script):
    """Two real processes racing for the same op dir: exactly one gets it (the lock is an flock, not a
    read-then-write pid file); the other says "in progress", never "holds artifacts of an earlier run"."""
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl.py"]})
    agents = f"scripted:{s}"
    assert cli_proc("run", str(op), "--approve", "auto", "--agents", agents).returncode == 0
    args = ["run", str(op), "--approve", "prompt", "--fresh", "--agents", agents]
    racers = [Terminal(args, tty=False), Terminal(args, tty=False)]
    codes: dict[int, int] = {}
    deadline = time.monotonic() + 120
    while len(codes) < 1 and time.monotonic() < deadline:  # the loser ends on its own; the winner asks
        for i, t in enumerate(racers):
            if i not in codes and t.proc.poll() is not None:
                while chunk := os.read(t.rfd, 65536):  # what it printed before it ended
                    t.buf += chunk.decode("utf-8", "replace")
                codes[i] = t.finish()
        time.sleep(0.2)
    assert len(codes) == 1, "one racer must have been refused"
    loser = next(iter(codes))
    winner = racers[1 - loser]
    assert codes[loser] == 1 and "a run is already in progress" in racers[loser].buf, racers[loser].buf
    assert "holds artifacts" not in racers[loser].buf
    assert len(list((op / ".forge" / "previous").iterdir())) == 1  # only the winner moved the earlier run's files
    winner.expect(r"decision .*> ")
    assert _approve_until_done(winner) == 0 and (op / "DESIGN.md").is_file() and (op / "MEMORY.md").is_file()


# ---------------------------------------------------------------------------------------- unchanged answers

def test_gates_flag_an_answer_that_did_not_change(op_copy, script, verifier, clock):
    """Issue #28 finding 10: design #2 came back byte-identical after a rejection and the gate showed no diff
    and no warning; the blocked gate did not say that the retries wrote the same failing file again."""
    from orchestrator import api
    from orchestrator.adapters.scripted import ScriptedAgents
    from orchestrator.ui.views import gate_view_for

    op = op_copy("affine")
    s = script("affine", implement={1: ["impl_numeric.py"]}, design=[("DESIGN.md", "module_interfaces.yaml")] * 2)
    inject = api.Injected(agents=ScriptedAgents(s), verifier=verifier, clock=clock)
    r = api.run(op, api.RunOptions(approve="stop", run_id="t1", budget=3), inject=inject)
    assert r.status == "waiting" and r.gate is not None and r.gate.gate == "design"
    assert not [n for n in gate_view_for(op).notes if "UNCHANGED" in n]  # the first design: nothing to compare
    api.reject(op, note="split the affine map in two")
    r = api.resume(op, inject=inject)
    assert r.gate is not None and r.gate.gate == "design" and r.gate.seq == 2
    view = gate_view_for(op)
    assert view.design_diff == [] and any(n.startswith("UNCHANGED: this design is byte-identical") for n in view.notes)
    api.approve(op)
    r = api.resume(op, inject=inject)
    while r.gate is not None and r.gate.gate != "blocked":
        api.approve(op)
        r = api.resume(op, inject=inject)
    assert r.gate is not None and r.gate.gate == "blocked"
    notes = gate_view_for(op).notes
    assert any("UNCHANGED RETRIES: attempt02, attempt03 of M1" in n for n in notes), notes
