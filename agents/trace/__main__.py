"""``python -m agents.trace TRACE_DIR`` — validate a trace and summarise its model calls.

Exit code 0 when the trace is valid, 1 when it has problems (listed one per line), 2 for usage errors.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from agents.trace._store import TraceError, TraceReader, validate_trace


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents.trace", description=__doc__.splitlines()[0])
    parser.add_argument("trace_dir", help="trace dir, run dir (.forge/run-<id>) or <op>/traces/<name>")
    args = parser.parse_args(argv)
    problems = validate_trace(args.trace_dir)
    if problems:
        for p in problems:
            print(f"problem: {p}", file=sys.stderr)
        return 1
    try:
        reader = TraceReader(args.trace_dir)
    except TraceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    m = reader.manifest
    print(f"trace {reader.dir} — run {m.run_id}, mode {m.record_mode}, format v{m.format_version}")
    print(f"models: {', '.join(f'{r}={v}' for r, v in sorted(m.models.items())) or '-'}")
    kinds = Counter(e.kind for e in reader.events)
    print("events: " + ", ".join(f"{k}={n}" for k, n in sorted(kinds.items())))
    calls = Counter(e.agent or "?" for e in reader.llm_calls)
    prompt = sum(e.usage.get("prompt_tokens", 0) for e in reader.llm_calls)
    completion = sum(e.usage.get("completion_tokens", 0) for e in reader.llm_calls)
    costs = [e.cost_usd for e in reader.llm_calls if e.cost_usd is not None]
    print("model calls: " + (", ".join(f"{a}={n}" for a, n in sorted(calls.items())) or "none")
          + f"; tokens prompt={prompt} completion={completion}"
          + (f"; cost ${sum(costs):.4f}" if costs else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
