"""Prompt tokens per role call, measured on recorded traces (target: implementer calls <= 12k tokens).

Usage:
    python bench/prompt_budget.py [TRACE_DIR ...] [--strict]

Without arguments it reads every trace under ``workspace/*/traces/*`` and ``workspace/*/.forge/run-*``; if
there are none yet, it records sample traces first: each role runs once per workspace operator on scripted
model answers (no network), with the real SPEC.md / golden.py texts as context. Tokens are approximated
as ``len(text) / 4`` unless ``tiktoken`` happens to be installed (it is not a dependency). When a trace
carries the endpoint's own ``usage.prompt_tokens`` it is reported next to the estimate.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.trace import TraceError, TraceReader  # noqa: E402

IMPLEMENTER_TARGET = 12_000


def _counter():
    try:
        import tiktoken  # type: ignore[import-not-found]

        enc = tiktoken.get_encoding("cl100k_base")
        return (lambda text: len(enc.encode(text))), "tiktoken cl100k_base"
    except Exception:
        return (lambda text: (len(text) + 3) // 4), "len/4"


def prompt_text(canonical: dict) -> str:
    parts = []
    for m in canonical.get("messages") or []:
        content = m.get("content")
        parts.append(content if isinstance(content, str) else json.dumps(content or ""))
        if m.get("tool_calls"):
            parts.append(json.dumps(m["tool_calls"]))
    if canonical.get("tools"):
        parts.append(json.dumps(canonical["tools"]))
    if canonical.get("response_format"):
        parts.append(json.dumps(canonical["response_format"]))
    return "\n".join(parts)


def find_traces() -> list[Path]:
    found = sorted(p for p in ROOT.glob("workspace/*/traces/*") if (p / "manifest.json").is_file()
                   or (p / "trace" / "manifest.json").is_file())
    found += sorted(p for p in ROOT.glob("workspace/*/.forge/run-*") if (p / "trace" / "manifest.json").is_file())
    return found


def record_samples(out_dir: Path) -> list[Path]:
    """Scripted runs of all four roles per workspace operator (what the tests do, with real op texts)."""
    from agents.config import load_config
    from agents.contracts import AuditContext, DebugContext, DesignContext, ImplementContext
    from agents.llm import ScriptedProvider, tool_response
    from agents.roles import LLMAgents
    from agents.trace import Trace

    kernel = ("import numpy as np\nimport pypto\n\n\n@pypto.frontend.jit\n"
              "def k(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),\n"
              "      y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):\n"
              "    pypto.set_vec_tile_shapes(16, 64)\n    y[:] = pypto.exp(x)\n\n\n"
              "def {w}(x):\n    y = np.empty_like(x)\n    k(x, y)\n    return y\n")
    traces = []
    for op in sorted(p for p in (ROOT / "workspace").glob("*") if (p / "SPEC.md").is_file()):
        name = op.name
        spec, golden = (op / "SPEC.md").read_text(), (op / "golden.py").read_text()
        design = f"---\nschema_version: 1\nop_name: {name}\ndynamic_axes: [B]\n---\n**Decision**: module_count = 1\n"
        yaml_text = (f"schema_version: 1\nop: {name}\nprimary_inputs: []\nmodules:\n  - id: 1\n    name: m\n"
                     "final_outputs: []\ncomposition_verification: {}\n")
        wrapper = f"{name}_wrapper"
        src = kernel.format(w=wrapper)
        line = next(i for i, ln in enumerate(src.splitlines(), 1) if "pypto.exp" in ln)
        script = [
            json.dumps({"design_md": design, "module_interfaces_yaml": yaml_text, "rationale": "sample"}),
            tool_response("read_skill", json.dumps({"section": "patterns#row-elementwise"})),
            json.dumps({"path": f"{name}_impl.py", "content": src}),
            json.dumps({"rows": [{"index": 1, "status": "✅", "pypto_call": "pypto.exp", "line": line}],
                        "verdict": "ok", "summary": "covered"}),
            json.dumps({"diagnosis": "d", "proposals": [{
                "file": f"{name}_impl.py", "line_start": line, "line_end": line,
                "current_snippet": src.splitlines()[line - 1], "proposed_snippet": "    y[:] = pypto.exp(x) * 1.0",
                "expected_effect": "e", "evidence": "v"}]}),
        ]
        provider = ScriptedProvider(script)
        trace_dir = out_dir / name
        cfg = load_config(op, env={"FORGE_MODEL": "sample-model"})
        with Trace(trace_dir, run_id=f"sample-{name}", mode="record", op_dir=op) as trace:
            agents = LLMAgents(cfg, trace, op_dir=op, provider_factory=lambda p=provider: p)
            agents.design(DesignContext(op_dir=str(op), op_name=name, spec_md=spec, golden_py=golden,
                                        complexity={"module_count": 1}))
            agents.implement(ImplementContext(
                op_dir=str(op), op_name=name, module=1, module_count=1, level="L0", target_file=f"{name}_impl.py",
                wrapper_name=wrapper, spec_md=spec, golden_py=golden, design_md=design * 20,
                module_interfaces_yaml=yaml_text, memory_md="# MEMORY\n" + "| row |\n" * 2000,
                current_source=src, feedback=["lint: OL03 return in JIT (line 9)"] * 3))
            agents.audit(AuditContext(op_dir=str(op), op_name=name, module=1, target_file=f"{name}_impl.py",
                                      source=src, inventory=[{"index": 1, "operation": "exp", "shape": "[B,64]",
                                                              "module": 1}], rows_in_scope=[1]))
            agents.debug(DebugContext(op_dir=str(op), op_name=name, module=1, failing_file=f"{name}_impl.py",
                                      source=src, report={"verdict": "FAIL_NUMERIC"}))
        traces.append(trace_dir)
    return traces


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="*", type=Path)
    parser.add_argument("--strict", action="store_true", help="exit 1 if an implementer call is over budget")
    args = parser.parse_args(argv)
    count, method = _counter()
    with tempfile.TemporaryDirectory(prefix="forge-budget-") as tmp:
        traces = args.traces or find_traces()
        source = "recorded traces"
        if not traces:
            traces = record_samples(Path(tmp))
            source = "sample traces (scripted answers, workspace op texts)"
        per_role: dict[str, list[int]] = defaultdict(list)
        reported: dict[str, list[int]] = defaultdict(list)
        for path in traces:
            try:
                reader = TraceReader(path)
            except TraceError as exc:
                print(f"skip {path}: {exc}", file=sys.stderr)
                continue
            for event in reader.llm_calls:
                if event.request_ref is None:
                    continue
                per_role[event.agent or "?"].append(count(prompt_text(reader.blob_json(event.request_ref))))
                if event.usage.get("prompt_tokens"):
                    reported[event.agent or "?"].append(event.usage["prompt_tokens"])
    print(f"prompt tokens per role call — {len(traces)} trace(s), {source}; estimate: {method}")
    print(f"{'role':<12} {'calls':>5} {'min':>7} {'median':>7} {'max':>7} {'endpoint max':>13}")
    over = 0
    for role in sorted(per_role):
        values = per_role[role]
        ep = max(reported[role]) if reported.get(role) else None
        print(f"{role:<12} {len(values):>5} {min(values):>7} {int(statistics.median(values)):>7} {max(values):>7} "
              f"{ep if ep is not None else '-':>13}")
        if role == "implementer":
            over = sum(1 for v in values if v > IMPLEMENTER_TARGET)
    print(f"implementer calls over {IMPLEMENTER_TARGET} tokens: {over}")
    return 1 if args.strict and over else 0


if __name__ == "__main__":
    raise SystemExit(main())
