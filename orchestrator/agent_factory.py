"""Choose the agents of a run: ``scripted:<script.yaml>`` or the model-backed roles.

The model-backed roles come from ``agents.build_agents`` (the one builder); :func:`model_agents` only checks
the configuration first and turns its problems into one-line `ForgeError` messages. :func:`agents_from_spec`
handles the ``--agents`` option.
"""

from __future__ import annotations

import re
from pathlib import Path

from agents import Trace, build_agents, local_model_problem
from agents.config import AgentsConfig, ConfigError, load_config
from agents.contracts import AgentSet
from agents.roles import LLMAgents
from agents.trace import TraceMode
from orchestrator.adapters.scripted import ScriptedAgents
from orchestrator.errors import ForgeError

_AT_LINE = re.compile(r"\(at line (\d+), column \d+\)")
_KEY_PROBLEM = re.compile(r"^(?P<path>.+?\.(?:toml|ya?ml)): (?P<section>[A-Za-z_]+)\.(?P<key>[A-Za-z_0-9]+): ")


def config_problem_line(exc: Exception) -> str:
    """A configuration error as one line that starts with ``file:line:`` when the line can be found.

    Why: ``agents.config`` names the file and the key (``forge.toml: local.threads: Input should be a valid
    integer``) or carries tomllib's ``(at line N, column M)``; a user fixes a file by its line number.
    """
    text = " ".join(str(exc).split())
    found = _AT_LINE.search(text)
    if found and ": cannot parse: " in text:
        path, rest = text.split(": cannot parse: ", 1)
        return f"{path}:{found.group(1)}: syntax error: {rest}"
    key = _KEY_PROBLEM.match(text)
    if key:
        line = _key_line(Path(key.group("path")), key.group("section"), key.group("key"))
        if line is not None:
            rest = text[key.end():]
            return f"{key.group('path')}:{line}: [{key.group('section')}] {key.group('key')}: {rest}"
    return text


def _key_line(path: Path, section: str, key: str) -> int | None:
    """The line of ``key`` inside ``[section]`` of a TOML file (None when not found: YAML, dotted keys ...)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    current = None
    for i, raw in enumerate(lines, 1):
        stripped = raw.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            current = stripped.strip("[]").strip()
        elif current == section and re.match(rf"{re.escape(key)}\s*=", stripped):
            return i
    return None


def config_problem(op_dir: Path, options: dict | None = None) -> str | None:
    """Why the model configuration (forge.toml, the environment, ``--model``/``--base-url``) cannot be read,
    in one line (``model configuration: forge.toml:3: ...``), or None. Checked before "is a model configured?":
    a broken forge.toml was reported as "no model configured", naming the wrong cause."""
    try:
        load_config(op_dir, overrides=dict(options or {}))
    except ConfigError as exc:
        return f"model configuration: {config_problem_line(exc)}"
    return None


def _config(op_dir: Path, options: dict | None) -> AgentsConfig:
    try:
        config = load_config(op_dir, overrides=dict(options or {}))
    except Exception as exc:  # ConfigError names the file and key
        raise ForgeError(f"model configuration: {config_problem_line(exc)}") from exc
    missing = [role for role, model in config.models.items() if not model]
    if missing:
        raise ForgeError("no model configured for " + ", ".join(missing) + ": give --model (run and resume "
                         "take it), set FORGE_MODEL (or FORGE_MODEL_<ROLE>) or a forge.toml [models] table, or run "
                         "with --agents scripted:<script.yaml>")
    problem = local_model_problem(op_dir, options) if config.uses_local else None
    if problem:
        raise ForgeError(f"model configuration: the local model cannot run here: {problem}")
    return config


def uses_local_model(op_dir: Path, options: dict | None = None) -> bool:
    """Whether the configured model is the embedded local one (model name ``local``)."""
    try:
        return load_config(op_dir, overrides=dict(options or {})).uses_local
    except ConfigError:
        return False


def endpoint_configured(op_dir: Path, options: dict | None = None) -> bool:
    """Whether an endpoint is configured (``--base-url``, ``OPENAI_BASE_URL``, forge.toml ``[llm] base_url``)."""
    try:
        return load_config(op_dir, overrides=dict(options or {})).llm.base_url is not None
    except ConfigError:
        return True  # a broken config is reported by the run, not papered over with the local model


def close_agents(agents: AgentSet | None) -> None:
    """Stop what model-backed agents started (the local model server); other agent sets start nothing."""
    if isinstance(agents, LLMAgents):
        agents.close()


def preflight(spec: str, op_dir: Path, options: dict | None = None) -> None:
    """Fail before anything is written when the agents cannot be built (missing script, no model)."""
    if spec.startswith("scripted:"):
        ScriptedAgents(spec[len("scripted:"):])
    elif spec in ("factory", "", "default"):
        _config(op_dir, options)
    elif spec != "injected":
        raise ForgeError(f"unknown --agents value {spec!r}: use scripted:<script.yaml> or leave it out", code=2)


PROBE_TIMEOUT_S = 5.0
"""How long the endpoint check before a run waits for an answer (the run's own calls wait ``[llm] timeout_s``)."""


def endpoint_problem(op_dir: Path, options: dict | None = None, *, api_key: str | None = None) -> str | None:
    """One line when the configured endpoint cannot serve the run, found before anything is written; else None.

    Why (UX audit s45): ``run op --model gpt-typo`` ran intake (golden.py on every case), saved the name in
    ``run.json`` and only then failed at the first model call; an endpoint whose host does not resolve did the
    same after ~15 s of retries. Two checks, each only where the answer is certain:

    - the endpoint cannot be reached at all (the host name does not resolve, nothing listens on the port);
    - the model is not served: the endpoint lists its models (``GET /models``) without the name, *and* a 1-token
      request for it is refused with 404. The second request is why a server that lists one model but answers
      to any name (llama.cpp's) or resolves aliases (``llama3`` for ``llama3:latest``) is not refused.

    Anything else (no listing, a 401, a timeout, garbage) says nothing: the run starts as before, and its first
    call reports what the endpoint answers. The embedded local model is not checked (its server starts with the
    run).
    """
    import os

    from agents.llm import LLMError, model_refused, served_models

    try:
        config = load_config(op_dir, overrides=dict(options or {}))
    except ConfigError:
        return None  # said by the callers' configuration checks
    models = sorted({m for m in config.models.values() if m})
    if not models or config.uses_local:
        return None
    key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
    try:
        served = served_models(config.base_url, key, PROBE_TIMEOUT_S)
    except LLMError as exc:
        return (f"{exc}; nothing was run (the endpoint comes from --base-url, OPENAI_BASE_URL or forge.toml's "
                "[llm] base_url)" + _local_meant(models))
    for model in models:
        if served is None or model in served:
            continue
        refusal = model_refused(config.base_url, key, model, PROBE_TIMEOUT_S)
        if refusal is not None:
            listed = ", ".join(served[:8]) + (f" and {len(served) - 8} more" if len(served) > 8 else "")
            return (f"{config.base_url} does not serve model '{model}' ({refusal}); it lists: {listed}; give one "
                    "of them with --model (or FORGE_MODEL); nothing was run" + _local_meant([model]))
    return None


def _local_meant(models: list[str]) -> str:
    """``; did you mean --model local ...?`` when a model name is a slip of ``local`` (``lcoal``, ``Local``).

    Why (UX audit s48): ``run op --model lcoal`` went to api.openai.com and said its host does not resolve; the
    user meant the embedded model, and nothing in the message pointed there."""
    import difflib

    from agents.config import LOCAL_MODEL

    slips = [m for m in models if m != LOCAL_MODEL and difflib.get_close_matches(m.lower(), [LOCAL_MODEL], n=1,
                                                                                    cutoff=0.6)]
    return f"; did you mean --model {LOCAL_MODEL} (the embedded local model) for '{slips[0]}'?" if slips else ""


def model_configured(op_dir: Path, options: dict | None = None) -> bool:
    """Whether every role has a model (options, ``FORGE_MODEL*`` or forge.toml)."""
    try:
        _config(op_dir, options)
    except ForgeError:
        return False
    return True


def model_agents(op_dir: Path, trace: Trace, options: dict | None = None, *,
                 mode: TraceMode | None = None) -> AgentSet:
    """The model-backed AgentSet (``agents.build_agents``), or a clear "no model configured" error.

    ``options`` are CLI-style overrides (``model``, ``model_<role>``, ``base_url``). In ``replay`` mode the
    models come from the recorded manifest and no model needs to be configured; otherwise a role without a
    model stops the run before anything is written.
    """
    if mode != "replay":
        _config(op_dir, options)
    try:
        return build_agents(op_dir, trace=trace, mode=mode, overrides=dict(options or {}))
    except ConfigError as exc:
        raise ForgeError(f"model configuration: {config_problem_line(exc)}") from exc


def agents_from_spec(spec: str, op_dir: Path, trace: Trace, options: dict | None = None) -> AgentSet:
    """``scripted:<path>`` -> ScriptedAgents; ``factory`` -> :func:`model_agents`."""
    if spec.startswith("scripted:"):
        return ScriptedAgents(spec[len("scripted:"):])
    if spec in ("factory", "", "default"):
        return model_agents(op_dir, trace, options)
    raise ForgeError(f"unknown --agents value {spec!r}: use scripted:<script.yaml> or leave it out")
