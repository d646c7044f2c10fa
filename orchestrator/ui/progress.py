"""Console output for runs: live progress while a step runs, the result table, the gate prompt.

On a terminal the current step is a rich status line (spinner, step, module k/N, attempt, elapsed time)
that is replaced by a one-line record when the step ends; elsewhere (a pipe, a log file, CI) each step
is one plain line when it starts, and verifications add their verdict when they end.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator

from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.text import Text

from orchestrator.gates import (
    DEFAULT_RAISE,
    GateDecision,
    GateRequest,
    answer_hint,
    closest_answer,
    interpret_answer,
)
from orchestrator.ui.screens import print_gate
from orchestrator.ui.summary import LAST_FAILURE_CHARS, attempt_lines, calls_line, clip, summary_table
from orchestrator.ui.views import gate_view_for
from runtime.verdicts import AGENT_ERROR, Verdict

__all__ = ["LAST_FAILURE_CHARS", "Progress", "ask", "attempt_lines", "calls_line", "clip", "outcome_text",
           "step_text", "summary_table", "working"]

log = logging.getLogger(__name__)

STEP_LABELS = {
    "check_op_dir": "checking SPEC.md and running golden.py on every case",
    "intake": "the run reads the op dir",
    "design": "designer writes DESIGN.md + module_interfaces.yaml",
    "design_check": "checking the design",
    "plan_stages": "planning the stage files",
    "implement": "implementer writes",
    "verify": "verifying",
    "debug": "debugger diagnoses",
    "audit": "golden-coverage audit",
    "cleanup": "cleanup writes the final kernel",
    "verify_final": "verifying the final kernel on all cases",
    "report": "writing README.md",
}


REASON_CHARS = 140


"""How much of a failure's reason a progress line shows (the gate screens and the report show all of it)."""


def outcome_text(node: str, values: dict) -> str:
    """Why a step ended the way it did, in one line: the verdict and its first reason (a lint rule id, the
    failing cases), an audit that blocked, a gate decided without a prompt (recorded, auto, approve/reject)."""
    mods = values.get("modules", []) or []
    k = int(values.get("active", 0) or 0)
    m = mods[k - 1] if 1 <= k <= len(mods) else {}
    feedback = [str(f) for f in m.get("feedback", [])]
    if node in ("verify", "verify_final"):
        verdict = values.get("last_verdict")
        if not verdict:
            return ""
        color = "green" if verdict == Verdict.PASS else "red"
        text = f"verdict [{color}]{escape(str(verdict))}[/]"
        reason = ""
        if verdict != Verdict.PASS and node == "verify" and feedback:
            reason = feedback[-1].split(f"{verdict}: ", 1)[-1].removeprefix(f"{verdict} ")
        elif verdict != Verdict.PASS and node == "verify_final":
            reason = str((values.get("blocked") or {}).get("reason") or "")
        return text + (f": {escape(clip(reason, REASON_CHARS))}" if reason else "")
    if node == "audit" and m.get("audit") == "block":
        why = next((f[len("audit: "):] for f in reversed(feedback) if f.startswith("audit: ")), "")
        return "[red]audit blocked[/]" + (f": {escape(clip(why, REASON_CHARS))}" if why else "")
    if node.startswith("gate_"):
        g = values.get("gate") or {}
        if g.get("gate") and f"gate_{g.get('gate')}" != node:
            # the record of an earlier gate: this one asked nothing (module gates off) - UX audit s33: a final-gate
            # rejection was shown again at the next module gate as a second rejection nobody made
            return ""
        if g.get("source") in ("replay", "auto") or (g.get("source") == "human" and g.get("decision")):
            note = f": {g['note']}" if g.get("note") and g.get("note") != "auto" else ""
            return escape(clip(f"{g.get('decision')} ({g.get('source')}){note}", REASON_CHARS + 40))
    return ""


SHOWN_AS = {"check_op_dir": "intake", "intake": "start"}
"""Step names as a user reads them: the op-dir check before a run is what ``intake`` does."""


def step_text(name: str, values: dict) -> str:
    """What is running now, e.g. ``implement  M2/3  attempt 4/10``."""
    # imported here: the graph module loads LangGraph (~2 s of CPU), which `intake` and `status` - users of this
    # module's other helpers - never need; a step line is only drawn while a graph runs, when it is loaded anyway
    from orchestrator.core.graph import MODULE_STEPS

    parts = [SHOWN_AS.get(name, name)]
    mods = values.get("modules", []) or []
    k = int(values.get("active", 0) or 0)
    if name.startswith("gate_"):
        return name
    if mods and 1 <= k <= len(mods) and name in MODULE_STEPS:
        m = mods[k - 1]
        attempt = int(m.get("attempts", 0)) + (1 if name == "implement" else 0)
        parts += [f"M{k}/{len(mods)} {m.get('name', '')}".rstrip(), f"attempt {attempt}/{m.get('budget', 0)}"]
    label = STEP_LABELS.get(name)
    if label and name not in ("implement", "verify"):
        parts.append(f"({label})")
    return "  ".join(parts)


def attempt_failure(node: str, values: dict) -> str | None:
    """Why the attempt that ``node`` just finished failed (one line, from the attempt log), else None."""
    if node not in ("implement", "verify", "design"):
        return None
    if node == "design":
        d = values.get("design") or {}
        return (d.get("problems") or [None])[0] if d.get("status") == "agent_error" else None
    log = values.get("attempt_log") or []
    k = int(values.get("active", 0) or 0)
    mods = values.get("modules") or []
    if not log or not 1 <= k <= len(mods):
        return None
    last = log[-1]
    if last.get("module") != k or last.get("attempt") != mods[k - 1].get("attempts") or last.get("verdict") == Verdict.PASS:
        return None
    if node == "implement" and last.get("verdict") != AGENT_ERROR:
        return None
    calls = last.get("model_calls")
    after = f" after {calls} model call{'s' if calls != 1 else ''}" if calls else ""
    reason = str(last.get("reason") or "")
    if node == "verify":  # the verdict is already on the line
        reason = reason.split(": ", 1)[1] if reason.startswith(f"{last.get('verdict')}: ") else reason
        return reason or None
    return f"failed{after}: {reason}"


class _Elapsed:
    """A status text whose elapsed time is recomputed at every refresh."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.t0 = time.monotonic()

    def __rich__(self) -> Text:
        return Text.from_markup(f"[bold]{escape(self.text)}[/]  [dim]{time.monotonic() - self.t0:5.1f} s[/]")


@contextlib.contextmanager
def working(console: Console, text: str) -> Iterator[None]:
    """A spinner with the elapsed time while a long call runs (on a terminal; nothing elsewhere): a golden that
    takes its whole per-case limit must not look like a hung command."""
    if not console.is_terminal:
        yield
        return
    with Status(_Elapsed(text), console=console, spinner="dots"):
        yield


class Progress:
    """``start(name, state)`` when a step starts, ``progress(state)`` after it; ``stop()`` before a prompt."""

    def __init__(self, console: Console, *, live: bool | None = None) -> None:
        self.console = console
        self.live = console.is_terminal if live is None else live
        self._status: Status | None = None
        self._current: _Elapsed | None = None
        self._name = ""
        self._prompted = False
        """The last gate was answered at this terminal (its screen already shows the decision)."""

    def start(self, name: str, values: dict) -> None:
        if name.startswith("gate_") and name == self._name and self._current is not None:
            return  # LangGraph runs a gate again once its interrupt is answered: one line per gate, not two
        text = step_text(name, values)
        self._name = name
        self._current = _Elapsed(text)
        if not self.live:
            self.console.print(f"-> {escape(text)}", highlight=False, soft_wrap=True)
            return
        if self._status is None:
            self._status = Status(self._current, console=self.console, spinner="dots")
            self._status.start()
        else:
            self._status.update(self._current)

    def __call__(self, values: dict) -> None:
        node = values.get("node")
        if not node or self._current is None or node != self._name:
            return
        took = time.monotonic() - self._current.t0
        outcome = outcome_text(node, values)
        if node.startswith("gate_"):  # a gate answered at the prompt shows its screen; any other gets a line
            if outcome and not self._prompted:
                self.stop()
                self.console.print(f"   {escape(node)}: {outcome}", highlight=False, soft_wrap=True)
            self._current, self._prompted = None, False
            return
        tail = f"  {outcome}" if outcome else ""
        failed = attempt_failure(node, values) if node != "verify" else None  # verify: the reason is in outcome
        if failed:
            tail += f"  [red]{escape(failed)}[/]"
        if self.live:
            self.console.print(f"[dim]done[/] {escape(self._current.text)}  [dim]{took:.1f} s[/]{tail}",
                               highlight=False, soft_wrap=True)
        elif tail:
            self.console.print(f"   {escape(node)}{tail} ({took:.1f} s)", highlight=False, soft_wrap=True)
        self._current = None

    def notice(self, text: str) -> None:
        """A notice about how the run starts (an input edited while it was stopped, files moved aside): shown
        before the first step, when it still matters, not in the closing message."""
        self.stop()
        self.console.print(f"note: {escape(text)}", highlight=False, soft_wrap=True)

    def prompted(self) -> None:
        """The gate now running is asked at this terminal: its screen is its record."""
        self._prompted = True

    def stop(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None


class _Closed(Exception):
    """The terminal went away (EOF) while asking."""


def ask(console: Console, op_dir: str | None = None, progress: Progress | None = None):
    """The interactive gate prompt for ``--approve prompt``.

    Shows the gate's screen, then accepts only: ``a``/``approve``, ``r``/``reject`` (any case) at the
    design/module/final gates, and ``1``-``4``/``hint``/``raise_budget``/``rollback``/``abort`` at the blocked
    gate. Anything else is answered with the list of valid answers and asked again. A reject and a hint ask
    for a note (required), raise_budget asks for N (default shown), abort asks for confirmation. End of input
    (no terminal) leaves the run waiting at the gate, like ``--approve stop``.
    """

    def read(label: str) -> str:
        try:
            return console.input(label)
        except EOFError:
            raise _Closed from None
        except KeyboardInterrupt:  # the "run stopped (Ctrl-C)" line went on the prompt's line (UX audit s44)
            console.print()
            raise

    def note(required: bool, what: str) -> str:
        while True:
            text = read(f"{what} > ").strip()
            if text or not required:
                return text
            console.print("[yellow]a note is required here (the agents read it)[/]")

    def prompt(req: GateRequest) -> GateDecision | None:
        if progress is not None:
            progress.stop()
            progress.prompted()
        _show(console, op_dir, req)
        try:
            while True:
                raw = read(f"[bold]decision[/] ({answer_hint(req.gate)}) > ")
                choice = interpret_answer(raw, req.gate)
                if choice is None:
                    meant = closest_answer(raw, req.gate)
                    console.print(f"[yellow]{escape(repr(raw.strip()))} is not an answer at this gate[/]; "
                                  + (f"did you mean '{meant}'? " if meant else "")
                                  + f"type one of: {answer_hint(req.gate)}")
                    continue
                if choice == "approve":
                    return GateDecision(decision="approve")
                if choice == "reject":
                    return GateDecision(decision="reject", note=note(True, "why reject? (note for the agents)"))
                if choice == "hint":
                    return GateDecision(decision="hint", note=note(True, "hint for the agents"))
                if choice == "raise_budget":
                    n = _ask_int(read, console, f"how many more attempts? [{DEFAULT_RAISE}] > ", DEFAULT_RAISE)
                    return GateDecision(decision="raise_budget", budget=n,
                                        note=note(False, "note for the agents (optional, Enter for none)"))
                if choice == "rollback":
                    return GateDecision(decision="rollback",
                                        note=note(False, "note for the designer (optional, Enter for none)"))
                confirm = read("abort the run? it ends without a kernel (yes/no) > ").strip().lower()
                if confirm in ("y", "yes"):
                    return GateDecision(decision="abort", note=note(False, "why (optional, Enter for none)"))
                console.print("not aborted; choose again")
        except _Closed:  # nobody to ask: leave the run waiting, like --approve stop
            # on a line of its own: the run's summary was printed after the prompt, on its line (UX audit s44)
            console.print("\n[yellow]end of input[/]: no decision recorded; the run waits at this gate")
            return None

    return prompt


def _ask_int(read, console: Console, label: str, default: int) -> int:
    while True:
        text = read(label).strip()
        if not text:
            return default
        if text.isdigit() and int(text) >= 1:
            return int(text)
        console.print("[yellow]a whole number of attempts, at least 1[/]")


def _show(console: Console, op_dir: str | None, req: GateRequest) -> None:
    """The gate's screen; falls back to the request's own lines if the run's files cannot be read."""
    if op_dir is not None:
        try:
            print_gate(console, gate_view_for(op_dir, req), req)
            return
        except Exception:  # noqa: BLE001 - a screen must never cost the decision; show the short form
            log.debug("gate screen failed", exc_info=True)
    console.print(f"\n[bold yellow]gate {req.gate}[/]" + (f" (module {req.module})" if req.module else "")
                  + f": {escape(req.title)}")
    for d in req.details:
        console.print(f"  {escape(d)}")
