"""Gate requests and decisions (pure data + pure parsing; the interrupt happens in the gate nodes).

Why default deny: a missing or malformed decision must never advance the work, so anything that does not
parse into a known decision becomes ``reject`` (``abort`` at the blocked gate).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, ValidationError

GateName = Literal["design", "module", "final", "blocked"]
GATES: tuple[str, ...] = ("design", "module", "final", "blocked")

BLOCKED_CHOICES = ("hint", "raise_budget", "rollback", "abort")
"""Choices at the blocked gate: add a hint and retry, raise the attempt budget, roll back to design, abort."""

DEFAULT_RAISE = 5


class GateRequest(BaseModel):
    """What a gate shows the human (and what ``status`` prints while a run waits)."""

    gate: GateName
    module: int | None = None
    title: str
    details: list[str] = Field(default_factory=list)
    choices: list[str] = Field(default_factory=lambda: ["approve", "reject"])


class GateDecision(BaseModel):
    decision: Literal["approve", "reject", "hint", "raise_budget", "rollback", "abort"]
    note: str = ""
    budget: int | None = None
    """Extra attempts for ``raise_budget`` (default 5)."""

    def encoded(self) -> str:
        """The decision string written to the trace (``raise_budget:N`` keeps the amount)."""
        if self.decision == "raise_budget":
            return f"raise_budget:{self.budget or DEFAULT_RAISE}"
        return self.decision


def parse_decision(raw: object, gate: str) -> GateDecision:
    """Turn whatever came back from ``interrupt()`` / a decision file / a trace into a decision.

    Malformed input is denied: ``reject`` at approval gates, ``abort`` at the blocked gate.
    """
    deny = "abort" if gate == "blocked" else "reject"
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
