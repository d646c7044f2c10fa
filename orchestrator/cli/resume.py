"""`python -m orchestrator resume op_dir`: continue the latest run (after a crash or a gate decision).

``--model`` / ``--base-url`` replace what the run was started with (and are kept for later resumes): the way
to fix a bad endpoint without losing the run. Which endpoint is used, highest precedence first: resume's
``--base-url``, the run's own ``--base-url`` (recorded in run.json), ``OPENAI_BASE_URL``, forge.toml ``[llm]``,
the default. The recorded flag beats the environment (as a flag always does): an ``OPENAI_BASE_URL`` exported
in the shell, maybe the one the run's ``--base-url`` was given to override, never silently moves a run to
another endpoint; the resume line says so when they differ. The same holds for ``--model`` and ``FORGE_MODEL``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rich.markup import escape

from orchestrator.cli._common import bad_base_url, console, drive, fail, warn_without_sandbox
from orchestrator.cli.run import local_model_missing
from orchestrator.command import cli_command, shell_path


def register(sub) -> None:
    p = sub.add_parser("resume", help="continue the latest run of op_dir from its last checkpoint")
    p.add_argument("op_dir", help="operator directory")
    p.add_argument("--approve", choices=["prompt", "auto", "stop"], default=None,
                   help="approval mode for the rest of the run (default: the run's own)")
    p.add_argument("--run", dest="run_id", default=None, help="a specific run id (default: the latest)")
    p.add_argument("--model", default=None,
                   help="model for every role from now on (default: the run's own --model, else FORGE_MODEL or "
                        "forge.toml)")
    p.add_argument("--base-url", default=None,
                   help="OpenAI-compatible endpoint from now on (default: the run's own --base-url, else "
                        "OPENAI_BASE_URL or forge.toml)")
    p.set_defaults(func=_resume)


def _resume(args: argparse.Namespace) -> int:
    from orchestrator import api
    from orchestrator.ui.progress import Progress, ask

    if args.base_url is not None and (problem := bad_base_url(args.base_url)):
        return fail(problem, 2)
    if args.run_id is not None and (problem := _unknown_run(args.op_dir, args.run_id)):
        return fail(problem)
    models = {k: v for k, v in (("model", args.model), ("base_url", args.base_url)) if v}
    if args.model and (problem := local_model_missing(args.op_dir, models)):
        return fail(problem)
    line = endpoint_line(args.op_dir, args.run_id, models)
    if line:
        console.print(escape(line), soft_wrap=True, highlight=False)
    progress = Progress(console)
    hooks = api.Hooks(prompt=ask(console, args.op_dir, progress), on_update=progress, on_start=progress.start,
                      on_notice=progress.notice)
    warn_without_sandbox()
    return drive(args.op_dir, lambda: api.resume(args.op_dir, approve=args.approve, run_id=args.run_id, hooks=hooks,
                                                 model_options=models), progress)


def _unknown_run(op_dir: str, run_id: str) -> str | None:
    """The message for a ``--run`` id that is not a run of op_dir (naming the ones that are), else None."""
    from orchestrator.store.paths import list_runs, run_dir

    root = Path(op_dir).resolve()
    if not root.is_dir():
        return None  # api.resume says the op dir is missing
    runs = [r for r in list_runs(root) if (run_dir(root, r) / "run.json").is_file()]
    if run_id in runs:
        return None
    known = f"the runs of {op_dir}: {', '.join(runs)}" if runs else f"{op_dir} has no runs yet"
    return f"run {run_id} does not exist; {known} (`{cli_command()} resume {shell_path(op_dir)} --run <id>`)"


def endpoint_line(op_dir: str, run_id: str | None, given: dict[str, str]) -> str | None:
    """``resuming run <id>: model M at URL (from ...)`` for a run on a model, with where each came from; None
    for scripted or replayed agents, or when the run or its configuration cannot be read (``api.resume`` then
    says what is wrong)."""
    from agents.config import ROLES, ConfigError, load_config
    from orchestrator.errors import ForgeError
    from orchestrator.store.runs import latest_run, read_meta

    root = Path(op_dir).resolve()
    try:
        rid = run_id or latest_run(root)
        meta = read_meta(root, rid)
    except ForgeError:
        return None
    if meta.agents != "factory":
        return None
    recorded = meta.model_options
    try:
        config = load_config(root, overrides={**recorded, **given})
    except ConfigError:
        return None
    env_url = os.environ.get("OPENAI_BASE_URL")
    env_model = os.environ.get("FORGE_MODEL")
    role_env = any(os.environ.get(f"FORGE_MODEL_{role.upper()}") for role in ROLES)
    notes, sources = [], []
    if config.uses_local:
        where = "the embedded local model"
    else:
        models = ", ".join(sorted({m for m in config.models.values() if m}))
        if not models:  # api.resume says "no model configured" and how to configure one (UX audit s33)
            return None
        where = f"model {models} at {config.base_url}"
    for key, flag, env_name, env_value in (("model", "--model", "FORGE_MODEL", env_model),
                                           ("base_url", "--base-url", "OPENAI_BASE_URL", env_url)):
        what = key.replace("_", " ")
        if key == "base_url" and config.uses_local:
            continue
        if key in given:
            sources.append(f"{what} from {flag}")
        elif key in recorded:
            sources.append(f"{what} from the run's {flag}")
            if env_value and env_value != recorded[key]:
                notes.append(f"{env_name}={env_value} is not used: the run's own {flag} {recorded[key]} wins "
                             f"over the environment; pass {flag} to change it")
        elif env_value or (key == "model" and role_env):
            sources.append(f"{what} from {env_name if env_value else 'FORGE_MODEL_<ROLE>'}")
        elif key == "base_url" and config.llm.base_url is None:
            sources.append(f"{what}: the default")
        elif config.source:
            sources.append(f"{what} from {config.source}")
    how = f" ({'; '.join(sources)})" if sources else ""
    return f"resuming run {rid}: {where}{how}" + "".join(f"\n  note: {n}" for n in notes)
