"""The shape of a ``--agents scripted:<file.yaml>`` script (format: :mod:`orchestrator.adapters.scripted`).

Why: :class:`~orchestrator.adapters.scripted.ScriptedAgents` reads its entries lazily, when a role is asked; a
malformed entry (``design: 5``) then failed mid-run as ``internal error: TypeError: object of type 'int' has no
len()``. The adapter checks its script with :func:`check_data` when it is built, and the CLI with
:func:`script_problem` before any run state exists. The check covers the keys that adapter reads and the files
they name; other keys (an authoring script's ``producer``, ``verdicts``, ...) and the
looser shapes the adapter accepts (an authoring script's per-module ``debug``) are left alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from runtime.yamlio import load_yaml


class ScriptProblem(ValueError):
    """What is wrong with the script, one line (without the file name)."""


ANSWER_KEYS = ("design", "implement", "perf", "debug", "audit", "pause")
"""The top-level keys the scripted adapter answers from."""

OTHER_KEYS = ("decisions", "producer", "verdicts")
"""Top-level keys of an authoring script (workspace/*/authoring/script.yaml) the adapter ignores."""


def _misspelled_key(data: dict) -> str | None:
    """A top-level key that is none of the known ones but close to one (``desing:``): the adapter would ignore it,
    and the run start, call the designer and block at its gate with "the script has no design entries" (UX audit
    s47). Only keys close to a known one are refused: other keys stay free for the script's own notes."""
    import difflib

    known = ANSWER_KEYS + OTHER_KEYS
    for key in data:
        if isinstance(key, str) and key not in known:
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
            if close:
                return f"unknown key '{key}'; did you mean '{close[0]}'?"
    return None


def script_problem(spec: str) -> str | None:
    """One line naming the script file and what is wrong with it, or None when the file does not exist (the run
    says "agent script not found", exit 1 like any missing path, before intake) or the script is usable. An
    ``--agents`` value that is not ``scripted:<file>`` is named too (misuse: the CLI exits 2 before anything runs)."""
    if not spec.startswith("scripted:"):
        return f"unknown --agents value {spec!r}: use scripted:<script.yaml>, or leave --agents out for the model"
    path = Path(spec[len("scripted:"):])
    if not path.is_file():
        return None
    try:
        _check(path)
    except ScriptProblem as exc:
        return f"agent script {path}: {exc}"
    return None


def _check(path: Path) -> None:
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ScriptProblem(f"cannot read it: {exc}") from None
    except yaml.YAMLError as exc:
        raise ScriptProblem(f"not valid YAML: {' '.join(str(exc).split())}") from None
    check_data(data, path.resolve().parent)
    _answers_something(data)


def _answers_something(data: Any) -> None:
    """Refuse a script that gives no agent any answer: no ``design``, ``implement`` or ``perf`` entry.

    Why: an empty file (or only comments, ``{}``, ``design: []``) started a run, wrote ``.forge/run-<id>/``
    and the audit repository, called the designer twice and stopped at the blocked gate with "the script has
    no design entries" (s47 open item). Every run implements at least one module, so such a script cannot
    take a run anywhere; a design-only script (to look at the design gate) stays accepted.
    Only the CLI applies this (:func:`script_problem`); the adapter itself accepts a partial script."""
    if not data:
        raise ScriptProblem("it is empty: it gives the agents no answers (expected design:, implement:, ...; "
                            "format: docs/running.md)")
    if not any(data.get(key) for key in ("design", "implement", "perf")):
        raise ScriptProblem("it has no design:, implement: or perf: entries (each is missing or empty), so no agent "
                            "that writes a file has an answer; format: docs/running.md")


def check_data(data: Any, base: Path) -> None:
    """Raise :class:`ScriptProblem` when the parsed script ``data`` (files relative to ``base``) is not one
    :class:`~orchestrator.adapters.scripted.ScriptedAgents` can answer from."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ScriptProblem(f"expected a mapping (design:, implement:, ...) at the top level, got {_kind(data)}")
    if (misspelled := _misspelled_key(data)) is not None:
        raise ScriptProblem(misspelled)
    design = data.get("design")
    if design is not None:
        for i, entry in enumerate(_list(design, "design"), start=1):
            where = f"design entry {i}"
            if not isinstance(entry, dict):
                raise ScriptProblem(f"{where}: expected a mapping {{design_md, module_interfaces_yaml, "
                                    f"rationale}}, got {_kind(entry)}")
            for key in ("design_md", "module_interfaces_yaml"):
                if key not in entry:
                    raise ScriptProblem(f"{where}: {key} is missing")
                _file(base, entry[key], f"{where}: {key}")
            if entry.get("rationale") is not None and not isinstance(entry["rationale"], str):
                raise ScriptProblem(f"{where}: rationale must be text, got {_kind(entry['rationale'])}")
    implement = data.get("implement")
    if implement is not None:
        if not isinstance(implement, dict):
            raise ScriptProblem(f"implement: expected a mapping of module id -> list of files, got {_kind(implement)}")
        for module, files in implement.items():
            if isinstance(module, bool) or not (isinstance(module, int) or str(module).isdigit()):
                raise ScriptProblem(f"implement: module id {module!r} is not a number")
            entries = _list(files, f"implement: module {module}")
            if not entries:
                raise ScriptProblem(f"implement: module {module} has no files")
            for n, entry in enumerate(entries, start=1):
                _implement_entry(base, entry, f"implement: module {module} attempt {n}")
    perf = data.get("perf")
    if perf is not None:
        for n, entry in enumerate(_list(perf, "perf"), start=1):
            _implement_entry(base, entry, f"perf: variant {n}")
    for key in ("debug", "audit", "pause"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            raise ScriptProblem(f"{key}: expected a mapping, got {_kind(data[key])}")
    diagnosis = (data.get("debug") or {}).get("diagnosis")
    if diagnosis is not None and not isinstance(diagnosis, str):
        raise ScriptProblem(f"debug: diagnosis must be text, got {_kind(diagnosis)}")
    block = (data.get("audit") or {}).get("block")
    if block is not None:
        if not isinstance(block, dict):
            raise ScriptProblem(f"audit: block: expected a mapping of module id -> attempts, got {_kind(block)}")
        for module, attempts in block.items():
            if not isinstance(attempts, list) or not all(isinstance(a, int) for a in attempts):
                raise ScriptProblem(f"audit: block: module {module}: expected a list of attempt numbers")


def _implement_entry(base: Path, entry: Any, where: str) -> None:
    if isinstance(entry, str):
        _file(base, entry, where)
        return
    if not isinstance(entry, dict):
        raise ScriptProblem(f"{where}: expected a file name or {{file, path}}, got {_kind(entry)}")
    if entry.get("error"):
        return  # the implementer fails with this message at that attempt
    if "file" not in entry:
        raise ScriptProblem(f"{where}: file is missing")
    _file(base, entry["file"], f"{where}: file")
    if "path" in entry and not isinstance(entry["path"], str):
        raise ScriptProblem(f"{where}: path must be text, got {_kind(entry['path'])}")


def _list(value: Any, where: str) -> list:
    if not isinstance(value, list):
        raise ScriptProblem(f"{where}: expected a list (one entry per attempt), got {_kind(value)}")
    return value


def _file(base: Path, value: Any, where: str) -> None:
    if not isinstance(value, str) or not value:
        raise ScriptProblem(f"{where}: expected a file name, got {_kind(value)}")
    if not (base / value).is_file():
        raise ScriptProblem(f"{where}: file {value} not found (paths are relative to the script)")


def _kind(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"
