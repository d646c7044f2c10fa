"""Gate requests and decisions (pure data + pure parsing; the interrupt happens in the gate nodes).

Why default deny: a missing or malformed decision must never advance the work, so anything that does not
parse into a known decision becomes ``reject`` (``abort`` at the blocked gate).

Why gate instances: a decision is for one opening of one gate, never "whatever gate the run waits at next".
Every opening carries a sequence number (``seq``, 1-based, counted over the whole run), so a decision
recorded for ``design#1`` can never approve the redesign waiting at ``design#2`` (:class:`GateId`).

Why a strict answer parser: at the terminal prompt a typo must never be taken as a decision;
:func:`interpret_answer` accepts only the listed words (and their short forms) and anything else re-asks.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, ValidationError

GateName = Literal["design", "module", "final", "blocked", "perf_start", "perf_deliver"]
GATES: tuple[str, ...] = ("design", "module", "final", "blocked", "perf_start", "perf_deliver")

ApproveMode = Literal["prompt", "auto", "stop"]
"""Who answers a gate the recording did not decide: the terminal prompt, ``auto``, or nobody (``stop``)."""

BLOCKED_CHOICES = ("hint", "raise_budget", "rollback", "abort")
"""Choices at the blocked gate: add a hint and retry, raise the attempt budget, roll back to design, abort."""

DEFAULT_RAISE = 5


class GateId(BaseModel):
    """One opening of one gate in one run: what a recorded decision is bound to."""

    run_id: str
    gate: GateName
    module: int | None = None
    seq: int
    """1-based count of gate openings in the run (a redesign's design gate has a higher seq)."""

    def label(self) -> str:
        mod = f" M{self.module}" if self.module else ""
        return f"{self.gate}{mod} #{self.seq}"


class GateRequest(BaseModel):
    """What a gate shows the human (and what ``status`` prints while a run waits)."""

    gate: GateName
    module: int | None = None
    title: str
    details: list[str] = Field(default_factory=list)
    choices: list[str] = Field(default_factory=lambda: ["approve", "reject"])
    seq: int = 0
    """Which opening of a gate this is (see :class:`GateId`); 0 only in requests from before gate ids."""

    def gate_id(self, run_id: str) -> GateId:
        return GateId(run_id=run_id, gate=self.gate, module=self.module, seq=self.seq)


DecisionName = Literal["approve", "reject", "hint", "raise_budget", "rollback", "abort"]


class GateDecision(BaseModel):
    decision: DecisionName
    note: str = ""
    budget: int | None = None
    """Extra attempts for ``raise_budget`` (default 5)."""

    def encoded(self) -> str:
        """The decision string written to the trace (``raise_budget:N`` keeps the amount)."""
        if self.decision == "raise_budget":
            return f"raise_budget:{self.budget or DEFAULT_RAISE}"
        return self.decision


class RecordedDecision(BaseModel):
    """A decision written by ``approve``/``reject`` for the gate instance ``for_gate`` (consumed once)."""

    decision: str
    note: str = ""
    for_gate: GateId
    recorded: str = ""
    """When it was recorded (wall clock, for ``status``; never shown to agents)."""


def parse_decision(raw: object, gate: str) -> GateDecision:
    """Turn whatever came back from ``interrupt()`` / a decision file / a trace into a decision.

    Malformed input is denied: ``reject`` at approval gates, ``abort`` at the blocked gate.
    """
    deny: DecisionName = "abort" if gate == "blocked" else "reject"
    if isinstance(raw, str):
        raw = {"decision": raw}
    if not isinstance(raw, dict):
        return GateDecision(decision=deny, note=f"malformed decision {raw!r}: denied")
    data = dict(raw)
    dec = str(data.get("decision") or "")
    if dec.startswith("raise_budget:"):
        dec, _, amount = dec.partition(":")
        data["budget"] = int(amount) if amount.isdigit() else None
    data["decision"] = dec
    data["note"] = str(data.get("note") or "")
    try:
        decision = GateDecision.model_validate({k: data.get(k) for k in ("decision", "note", "budget")})
    except ValidationError:
        return GateDecision(decision=deny, note=f"malformed decision {raw!r}: denied")
    allowed = BLOCKED_CHOICES if gate == "blocked" else ("approve", "reject")
    if decision.decision not in allowed:
        return GateDecision(decision=deny, note=f"decision '{decision.decision}' is not valid at gate "
                                                f"'{gate}' (valid: {', '.join(allowed)}): denied")
    if decision.decision == "hint" and not decision.note.strip():
        return GateDecision(decision=deny, note="a hint needs a note: denied")
    return decision


AnswerSource = Literal["human", "auto"]


def resume_value(decision: GateDecision, source: AnswerSource) -> dict:
    """What the driver resumes a waiting gate with: the decision and who gave it."""
    return {**decision.model_dump(), "source": source}


def answer_source(raw: object) -> str:
    """Who answered (``human`` | ``auto``) from a resume value; anything else counts as a human answer."""
    source = raw.get("source") if isinstance(raw, dict) else None
    return source if source in ("human", "auto") else "human"


APPROVAL_ANSWERS: dict[str, str] = {"a": "approve", "approve": "approve", "r": "reject", "reject": "reject"}
"""What the prompt accepts at the design, module and final gates (any letter case)."""
BLOCKED_ANSWERS: dict[str, str] = {
    "1": "hint", "h": "hint", "hint": "hint",
    "2": "raise_budget", "b": "raise_budget", "raise": "raise_budget", "raise_budget": "raise_budget",
    "3": "rollback", "rollback": "rollback",
    "4": "abort", "abort": "abort",
}
"""What the prompt accepts at the blocked gate (any letter case); ``r`` is not accepted there on purpose,
since at the other gates it means reject."""


def interpret_answer(text: str, gate: str) -> str | None:
    """The decision a typed answer names, or None when it names none (the prompt then asks again)."""
    table = BLOCKED_ANSWERS if gate == "blocked" else APPROVAL_ANSWERS
    return table.get(text.strip().lower())


def closest_answer(text: str, gate: str) -> str | None:
    """The decision a mistyped answer most likely meant (``aprove`` -> ``approve``), or None; only ever suggested,
    never taken: a gate decision is recorded as typed (UX audit s47: ``'aprove' is not an answer`` named none)."""
    import difflib

    words = sorted({w for w in (BLOCKED_ANSWERS if gate == "blocked" else APPROVAL_ANSWERS) if len(w) > 2})
    close = difflib.get_close_matches(text.strip().lower(), words, n=1, cutoff=0.6)
    return close[0] if close else None


def answer_hint(gate: str) -> str:
    """The one-line list of accepted answers shown at the prompt."""
    if gate == "blocked":
        return "[1] hint  [2] raise_budget  [3] rollback  [4] abort"
    return "a = approve, r = reject"
