"""A campaign's suite: which tasks, with which per-task options.

A suite is a folder or a YAML file. A folder contributes every op dir in it (a folder holding ``SPEC.md``;
not searched further) and every KernelBench task file (``class Model`` + ``get_inputs()``), searched
recursively in name order. A YAML file lists entries, each a path (relative to the YAML file) or a mapping
with per-task options::

    tasks:
      - workspace/silu
      - path: ../shared/kernelbench/level1          # a folder: everything in it
      - path: tests/orchestrator/fixtures/ops/sqrecip
        id: sqrecip                                  # default: <parent folder>/<name>
        level: fixtures                              # default: the parent folder's name
        agents: scripted:script.yaml                 # this task only (relative to the YAML file)
        budget: 3                                    # attempts per module
        timeout: 900                                 # wall seconds per sample (then: failed, budget)
        resources: {NPU: 1}                          # what one sample needs from the cluster (default CPU: 1)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from orchestrator.adapters.kernelbench import is_task_file
from orchestrator.errors import ForgeError
from runtime.yamlio import load_yaml

__all__ = ["Task", "load_suite"]


class Task(BaseModel):
    """One task of a campaign (an op dir, or a task file imported once per campaign)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    """Unique in the campaign; also the folder under ``runs/`` (``level1/19_ReLU``)."""
    source: str
    """Absolute path of the op dir or task file."""
    kind: Literal["opdir", "task_file"]
    level: str
    agents: str | None = None
    """Per-task agent configuration (``scripted:<abs path>``); None = the campaign's."""
    budget: int | None = None
    timeout: float | None = None
    resources: dict[str, float] = Field(default_factory=lambda: {"CPU": 1.0})


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    id: str | None = None
    level: str | None = None
    agents: str | None = None
    budget: int | None = Field(default=None, ge=1)
    timeout: float | None = Field(default=None, gt=0)
    resources: dict[str, float] | None = None


def _task_id(path: Path, root: Path | None) -> str:
    rel = path.relative_to(root) if root is not None and path.is_relative_to(root) else Path(path.parent.name) / path.name
    rel_s = rel.with_suffix("").as_posix() if path.suffix == ".py" else rel.as_posix()
    return re.sub(r"[^\w./-]", "_", rel_s)


def _scan(folder: Path, root: Path | None) -> list[Task]:
    """Every op dir and task file under ``folder`` (an op dir is not searched further)."""
    if (folder / "SPEC.md").is_file():
        return [Task(id=_task_id(folder, root if root != folder else None), source=str(folder), kind="opdir",
                     level=folder.parent.name)]
    found: list[Task] = []
    for child in sorted(folder.iterdir()):
        if child.name.startswith((".", "_")) or child.name in ("traces", "authoring", "modules"):
            continue
        if child.is_dir():
            found += _scan(child, root)
        elif is_task_file(child):
            found.append(Task(id=_task_id(child, root), source=str(child), kind="task_file", level=child.parent.name))
    return found


def _entry_tasks(entry: _Entry, base: Path) -> list[Task]:
    path = (base / entry.path).resolve()
    if not path.exists():
        raise ForgeError(f"suite entry {entry.path!r}: {path} does not exist")
    if path.is_dir() and not (path / "SPEC.md").is_file():
        if entry.id is not None:
            raise ForgeError(f"suite entry {entry.path!r}: `id` applies to one op dir or task file, not a folder")
        tasks = _scan(path, path.parent)
    elif path.is_dir():
        tasks = [Task(id=_task_id(path, None), source=str(path), kind="opdir", level=path.parent.name)]
    elif is_task_file(path):
        tasks = [Task(id=_task_id(path, None), source=str(path), kind="task_file", level=path.parent.name)]
    else:
        raise ForgeError(f"suite entry {entry.path!r}: neither an op dir (SPEC.md) nor a KernelBench task file")
    agents = entry.agents
    if agents and agents.startswith("scripted:"):
        script = (base / agents[len("scripted:"):]).resolve()
        if not script.is_file():  # else each of the task's samples failed `no_agent` once the campaign ran
            raise ForgeError(f"suite entry {entry.path!r}: agent script not found: {script} (paths are relative "
                             "to the suite file)")
        agents = f"scripted:{script}"
    elif agents:
        raise ForgeError(f"suite entry {entry.path!r}: unknown agents value {agents!r}: use scripted:<script.yaml>, "
                         "or leave it out for the campaign's agents")
    update: dict[str, Any] = {k: v for k, v in (("level", entry.level), ("agents", agents), ("budget", entry.budget),
                                               ("timeout", entry.timeout), ("resources", entry.resources),
                                               ("id", entry.id)) if v is not None}
    return [t.model_copy(update=update) for t in tasks]


def load_suite(suite: str | Path) -> list[Task]:
    """The tasks of a suite folder or YAML file.

    Raises:
        ForgeError: the suite does not exist, is not valid YAML, an entry is malformed or names nothing usable,
            two tasks get the same id, or the suite holds no task.
    """
    path = Path(suite).resolve()
    if not path.exists():
        raise ForgeError(f"suite not found: {suite}")
    if path.is_dir():
        tasks = _scan(path, path)
    elif path.suffix in (".yaml", ".yml"):
        try:
            data = load_yaml(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise ForgeError(f"{suite}{':' + str(mark.line + 1) if mark else ''}: not valid YAML "
                             f"({getattr(exc, 'problem', None) or exc})") from None
        raw = data.get("tasks") if isinstance(data, dict) else None
        if not isinstance(raw, list):
            raise ForgeError(f"{suite}: a suite file needs a `tasks:` list")
        tasks = []
        for i, item in enumerate(raw):
            try:
                entry = _Entry(path=item) if isinstance(item, str) else _Entry.model_validate(item)
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(p) for p in err["loc"])
                raise ForgeError(f"{suite}: tasks[{i}]{'.' + where if where else ''}: {err['msg']}") from None
            tasks += _entry_tasks(entry, path.parent)
    elif is_task_file(path):
        tasks = [Task(id=_task_id(path, None), source=str(path), kind="task_file", level=path.parent.name)]
    else:
        raise ForgeError(f"{suite}: give a folder, a suite .yaml file or a task file")
    if not tasks:
        raise ForgeError(f"{suite}: no op dir (SPEC.md) and no KernelBench task file found")
    seen: dict[str, str] = {}
    for t in tasks:
        if t.id in seen:
            raise ForgeError(f"{suite}: two tasks have the id {t.id!r} ({seen[t.id]} and {t.source}); give one an `id`")
        seen[t.id] = t.source
    return tasks
