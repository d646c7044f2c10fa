"""The campaign directory's records: ``campaign.json`` (what was asked) and ``results.jsonl`` (what happened).

``results.jsonl`` is append-only, one :class:`SampleResult` per line, written by the driver as each
(task, sample) ends (flushed and fsynced, so a ``kill -9`` of the driver loses at most the line being
written; a torn last line is skipped on reading). A sample can have several lines: ``infra`` lines (an
infrastructure failure that was retried), ``parked`` lines (waiting at a gate), and at most one final line
(``solved`` or ``failed``). Re-running a campaign skips every sample with a final line.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from orchestrator.errors import ForgeError

__all__ = ["CATEGORIES", "CampaignConfig", "Ledger", "SampleResult", "SampleState"]

FORMAT_VERSION = 1

CATEGORIES = ("intake", "design_rejected", "lint", "numeric", "runtime", "cheat", "budget", "no_agent", "infra")
"""Why a sample failed: the op dir fails intake (or the task cannot be imported); the design never passed the
design check / gate; the last failing verdict of the module that exhausted its budget (lint, numeric,
runtime, cheat); the sample's wall-time limit (budget); no agent configuration can run the task (no model and
no shipped trace); infrastructure failures that persisted after the retries (infra)."""


class CampaignConfig(BaseModel):
    """What a campaign was started with (``campaign.json``); a re-run must ask for the same."""

    model_config = ConfigDict(extra="forbid")

    version: int = FORMAT_VERSION
    suite: str
    samples: int = Field(ge=1)
    agents: str | None = None
    """``scripted:<file>`` for every task; None = the configured model, else each op dir's shipped trace."""
    model: str | None = None
    base_url: str | None = None
    gates: Literal["auto", "stop"] = "auto"
    budget: int = 10
    module_gate: bool = False
    perf: bool = False
    retries: int = 2
    """Infrastructure failures retried per sample before it counts as failed (category infra)."""
    created: str = ""

    def same_campaign(self, other: CampaignConfig) -> str | None:
        """Why ``other`` (a re-run's request) is not this campaign, or None (``samples`` may grow)."""
        for key in ("suite", "agents", "model", "base_url", "gates", "budget", "module_gate", "perf"):
            if getattr(self, key) != getattr(other, key):
                return f"{key} is {getattr(self, key)!r} in this campaign, the command asks for {getattr(other, key)!r}"
        return None


class SampleResult(BaseModel):
    """One line of ``results.jsonl``."""

    model_config = ConfigDict(extra="ignore")

    version: int = FORMAT_VERSION
    task: str
    sample: int
    level: str
    status: Literal["solved", "failed", "parked", "infra"]
    category: str | None = None
    """For ``failed``: one of :data:`CATEGORIES`."""
    message: str = ""
    run_id: str | None = None
    op_dir: str | None = None
    """Relative to the campaign directory."""
    gate: str | None = None
    """For ``parked``: the gate the run waits at."""
    wall_s: float = 0.0
    attempts: int = 0
    """Implementation attempts over all modules (the run's own count)."""
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    cycles_first: float | None = None
    """Cost-model cycles of the first verified kernel (summed over cases), where the toolchain ran."""
    cycles_final: float | None = None
    """... and of the delivered kernel (differs after a performance stage)."""
    resumed: bool = False
    """The run continued from a checkpoint (after a kill, a crash or a gate)."""
    worker: str = ""
    finished: str = ""

    @property
    def final(self) -> bool:
        return self.status in ("solved", "failed")


class SampleState(BaseModel):
    """Everything the ledger knows about one (task, sample)."""

    final: SampleResult | None = None
    parked: SampleResult | None = None
    infra: int = 0


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


class Ledger:
    """``campaign.json`` + ``results.jsonl`` of one campaign directory."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.results = self.root / "results.jsonl"
        self.config_path = self.root / "campaign.json"

    def config(self) -> CampaignConfig | None:
        """What the campaign was asked (None: no campaign here yet); a file given as the campaign directory is
        refused in one sentence (UX audit s47: ``campaign run ... --out FILE`` and ``campaign report FILE`` said
        ``[Errno 20] Not a directory``)."""
        if self.root.exists() and not self.root.is_dir():
            raise ForgeError(f"{self.root} is a file, not a campaign directory (give the folder `campaign run --out` "
                             "writes and `campaign report` reads)")
        try:
            return CampaignConfig.model_validate_json(self.config_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValidationError, ValueError) as exc:
            raise ForgeError(f"{self.config_path}: not a campaign record ({str(exc).splitlines()[0]})") from None

    def write_config(self, config: CampaignConfig) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.config_path.with_suffix(".tmp")
        tmp.write_text(config.model_dump_json(indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, self.config_path)

    def append(self, result: SampleResult) -> SampleResult:
        """Write one line durably (flush + fsync) and return it (with ``finished`` set)."""
        if not result.finished:
            result = result.model_copy(update={"finished": _now()})
        self.root.mkdir(parents=True, exist_ok=True)
        line = result.model_dump_json() + "\n"
        with open(self.results, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        return result

    def lines(self) -> list[SampleResult]:
        """Every readable line in order (a torn or foreign line is skipped)."""
        try:
            text = self.results.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        out = []
        for raw in text.splitlines():
            try:
                out.append(SampleResult.model_validate(json.loads(raw)))
            except (ValueError, ValidationError):
                continue
        return out

    def states(self) -> dict[tuple[str, int], SampleState]:
        """(task, sample) -> its final line, its open parked line, its infra failure count."""
        out: dict[tuple[str, int], SampleState] = {}
        for r in self.lines():
            st = out.setdefault((r.task, r.sample), SampleState())
            if r.status == "infra":
                st.infra += 1
            elif r.status == "parked":
                if st.final is None:
                    st.parked = r
            elif st.final is None:
                st.final, st.parked = r, None
        return out
