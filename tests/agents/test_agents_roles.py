"""The four roles end to end on scripted model answers, including the malformed-output repair path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.config import load_config
from agents.contracts import (
    AgentError,
    AgentSet,
    AuditContext,
    AuditResult,
    DebugContext,
    DebugResult,
    DesignContext,
    DesignResult,
    ImplementContext,
    ImplementResult,
)
from agents.llm import ScriptedProvider, tool_response
from agents.roles import LLMAgents
from agents.trace import Trace, TraceReader

KERNEL = '''import numpy as np
import pypto
from agents_fixtures import _isolated_env  # noqa: F401  (autouse)


@pypto.frontend.jit
def silu_kernel(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, 16), name="rows", idx_name="i", unroll_list=[1]):
        valid = (n - i * 16).min(16)
        xt = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[valid, 64])
        yt = xt * pypto.sigmoid(xt)
        pypto.assemble(yt, [i * 16, 0], y)


def silu_wrapper(x):
    y = np.empty_like(x)
    silu_kernel(x, y)
    return y
'''

YAML = """schema_version: 1
op: silu
primary_inputs:
  - {name: x, shape: [B, 64], dtype: float32}
modules:
  - id: 1
    name: silu
    inputs: [{name: x, source: primary}]
    outputs: [{name: y, shape: [B, 64], dtype: float32}]
final_outputs:
  - {name: y, source: module_1}
composition_verification: {atol: 1.0e-5, rtol: 1.0e-5, seeds: [0], shapes: [{B: 20}]}
"""

DESIGN = "---\nschema_version: 1\nop_name: silu\ndynamic_axes: [B]\n---\n**Decision**: module_count = 1\n"


def _agents(tmp_path: Path, script, *, max_repairs: int = 2) -> tuple[LLMAgents, ScriptedProvider, Trace]:
    provider = ScriptedProvider(script)
    cfg = load_config(tmp_path, env={"FORGE_MODEL": "scripted"}, overrides={"max_repairs": max_repairs})
    trace = Trace(tmp_path / "trace", run_id="t", mode="record")
    return LLMAgents(cfg, trace, op_dir=tmp_path, provider_factory=lambda: provider), provider, trace


def _impl_ctx(**kw) -> ImplementContext:
    base = dict(op_dir=".", op_name="silu", module=1, module_count=1, level="L0", target_file="silu_impl.py",
                wrapper_name="silu_wrapper", spec_md="SPEC", golden_py="def golden(x): ...",
                design_md=DESIGN, module_interfaces_yaml=YAML)
    return ImplementContext(**{**base, **kw})


def _protocol_mismatches(cls: type, protocol: type) -> list[str]:
    """Members of ``protocol`` that ``cls`` lacks or declares with other parameter or return types.

    ``isinstance`` on a runtime-checkable Protocol only checks that the names exist; this compares the
    annotations too, so a method taking or returning the wrong contract fails.
    """
    import inspect
    import typing

    out = []
    for name, member in vars(protocol).items():
        if name.startswith("_") or not callable(member):
            continue
        impl = getattr(cls, name, None)
        if impl is None:
            out.append(f"{name}: missing")
            continue
        want, got = typing.get_type_hints(member), typing.get_type_hints(impl)
        if want != got or list(inspect.signature(member).parameters) != list(inspect.signature(impl).parameters):
            out.append(f"{name}: {got} != {want}")
    return out


def test_llm_agents_is_an_agent_set(tmp_path: Path) -> None:
    from orchestrator.adapters.scripted import ScriptedAgents  # the other AgentSet (deterministic scripts)

    agents, _, _ = _agents(tmp_path, [])
    assert isinstance(agents, AgentSet)
    assert _protocol_mismatches(type(agents), AgentSet) == []
    assert _protocol_mismatches(ScriptedAgents, AgentSet) == []


def test_the_protocol_check_sees_a_wrong_signature() -> None:
    class Wrong:
        def design(self, ctx: ImplementContext) -> DesignResult: ...  # wrong context type
        def implement(self, ctx: ImplementContext) -> ImplementResult: ...
        def audit(self, ctx: AuditContext) -> AuditResult: ...
        def debug(self, ctx: DebugContext) -> DebugResult: ...

    assert isinstance(Wrong(), AgentSet)  # what isinstance alone would accept
    assert [m.split(":")[0] for m in _protocol_mismatches(Wrong, AgentSet)] == ["design"]


# ------------------------------------------------------------------------------------------ implementer


def test_implementer_tool_round_then_answer(tmp_path: Path) -> None:
    script = [tool_response("read_skill", json.dumps({"section": "patterns#tail-valid-shape"})),
              json.dumps({"path": "silu_impl.py", "content": KERNEL, "notes": "row kernel"})]
    agents, provider, trace = _agents(tmp_path, script)
    result = agents.implement(_impl_ctx())
    assert result.path == "silu_impl.py" and result.content == KERNEL and result.notes == "row kernel"
    second = provider.requests[1].messages
    assert second[-1]["role"] == "tool" and "valid_shape" in second[-1]["content"]
    kinds = [e.kind for e in trace.events]
    assert kinds == ["llm_call", "tool_call", "llm_call"]
    assert trace.events[0].agent == "implementer" and trace.events[0].prompt_hash == agents.prompt_hashes[
        "implementer"]
    assert provider.requests[0].tools and provider.requests[0].response_format["type"] == "json_schema"


@pytest.mark.parametrize("bad, fragment", [
    ("{not json", "not valid JSON"),
    (json.dumps({"path": "modules/other.py", "content": KERNEL}), "path must be exactly"),
    (json.dumps({"path": "silu_impl.py"}), "content"),
    (json.dumps({"path": "silu_impl.py", "content": "def broken(:\n"}), "not valid Python"),
    (json.dumps({"path": "silu_impl.py", "content": KERNEL.replace("silu_wrapper", "w")}), "silu_wrapper"),
])
def test_implementer_repairs_malformed_answers(tmp_path: Path, bad: str, fragment: str) -> None:
    good = json.dumps({"path": "silu_impl.py", "content": KERNEL})
    agents, provider, _ = _agents(tmp_path, [bad, good])
    assert agents.implement(_impl_ctx()).content == KERNEL
    repair = provider.requests[1].messages[-1]["content"]
    assert repair.startswith("Your answer was rejected") and fragment in repair
    assert provider.requests[1].messages[-2] == {"role": "assistant", "content": bad}


def test_implementer_gives_up_after_bounded_repairs(tmp_path: Path) -> None:
    different = ["nope", json.dumps({"path": "silu_impl.py"}), "{not json", "never asked"]
    agents, provider, _ = _agents(tmp_path, different, max_repairs=2)
    with pytest.raises(AgentError) as info:
        agents.implement(_impl_ctx())
    assert info.value.role == "implementer" and info.value.attempts == 3 and info.value.model_calls == 3
    assert "not valid JSON" in str(info.value) and not info.value.stop
    assert len(provider.requests) == 3


@pytest.mark.parametrize("answers, why", [
    (["nope", "nope", "never asked"], "byte-identical answer twice in a row"),
    (["{not json", 'Here:  {also not json}', "never asked"], "the same problem twice in a row"),
])
def test_a_repeated_failure_stops_early(tmp_path: Path, answers: list[str], why: str) -> None:
    agents, provider, _ = _agents(tmp_path, answers, max_repairs=5)
    with pytest.raises(AgentError) as info:
        agents.implement(_impl_ctx())
    assert info.value.stop and info.value.model_calls == 2 and len(provider.requests) == 2
    assert why in info.value.reason and "\n" not in info.value.reason


def test_implementer_l1_requires_module_marker_and_strips_fences(tmp_path: Path) -> None:
    ctx = _impl_ctx(level="L1", module=2, module_count=2, target_file="modules/silu_module12_impl.py",
                    wrapper_name="silu_wrapper")
    marked = KERNEL.replace("        xt =", "        # --- Module M2: act ---\n        xt =")
    fenced = "```python\n" + marked + "```"
    agents, provider, _ = _agents(tmp_path, [json.dumps({"path": ctx.target_file, "content": KERNEL}),
                                             json.dumps({"path": "./" + ctx.target_file, "content": fenced})])
    result = agents.implement(ctx)
    assert "Module M2" in provider.requests[1].messages[-1]["content"]
    assert result.content.startswith("import numpy") and "```" not in result.content
    assert result.path == ctx.target_file


def test_tool_budget_is_bounded(tmp_path: Path) -> None:
    call = tool_response("read_skill", json.dumps({"section": "patterns"}))
    provider = ScriptedProvider([call, call, call, json.dumps({"path": "silu_impl.py", "content": KERNEL})])
    cfg = load_config(tmp_path, env={"FORGE_MODEL": "m"}, overrides={"max_tool_rounds": 2})
    agents = LLMAgents(cfg, Trace(None, run_id="x"), provider_factory=lambda: provider)
    assert agents.implement(_impl_ctx()).path == "silu_impl.py"
    assert provider.requests[2].tools is None  # third request no longer offers tools
    assert "tool budget exhausted" in provider.requests[3].messages[-1]["content"]


# --------------------------------------------------------------------------------------------- designer


def _design_ctx(module_count: int = 1) -> DesignContext:
    return DesignContext(op_dir=".", op_name="silu", spec_md="SPEC", golden_py="def golden(x): ...",
                         complexity={"module_count": module_count, "level": "L0", "total_complexity": 0.4},
                         rejection_notes=["keep fp32"], design_check_problems=["boundary name missing"])


def test_designer_end_to_end_with_repair(tmp_path: Path) -> None:
    two = YAML.replace("final_outputs:", "  - id: 2\n    name: extra\n    inputs: [{name: y, source: module_1}]\n"
                                         "    outputs: [{name: z, shape: [B, 64], dtype: float32}]\n"
                                         "final_outputs:")
    script = [
        json.dumps({"design_md": DESIGN, "module_interfaces_yaml": "a: [b"}),
        json.dumps({"design_md": DESIGN, "module_interfaces_yaml": two}),
        json.dumps({"design_md": DESIGN, "module_interfaces_yaml": YAML, "rationale": None}),
    ]
    agents, provider, _ = _agents(tmp_path, script)
    result = agents.design(_design_ctx())
    assert result.module_interfaces_yaml == YAML and result.rationale is None
    assert "not valid YAML" in provider.requests[1].messages[-1]["content"]
    assert "module_count = 1" in provider.requests[2].messages[-1]["content"]
    user = provider.requests[0].messages[1]["content"]
    assert "keep fp32" in user and "boundary name missing" in user and "This message contains:" in user


def test_designer_deviation_needs_rationale(tmp_path: Path) -> None:
    answer = {"design_md": DESIGN, "module_interfaces_yaml": YAML}
    agents, provider, _ = _agents(tmp_path, [json.dumps(answer),
                                             json.dumps({**answer, "rationale": "one fused row kernel"})])
    result = agents.design(_design_ctx(module_count=2))
    assert result.rationale == "one fused row kernel"
    assert "rationale" in provider.requests[1].messages[-1]["content"]


# --------------------------------------------------------------------------------------------- verifier


def _audit_ctx() -> AuditContext:
    inventory = [{"index": 1, "operation": "sigmoid(x)", "shape": "[B,64]", "module": 1},
                 {"index": 2, "operation": "x * s", "shape": "[B,64]", "module": 1}]
    return AuditContext(op_dir=".", op_name="silu", module=1, target_file="silu_impl.py", source=KERNEL,
                        inventory=inventory, rows_in_scope=[1, 2], verify_summary={"verdict": "PASS"})


def _line_of(text: str) -> int:
    return next(i for i, ln in enumerate(KERNEL.splitlines(), 1) if text in ln)


def test_verifier_audit_checks_lines_and_passes_when_covered(tmp_path: Path) -> None:
    line = _line_of("pypto.sigmoid")
    wrong = {"rows": [{"index": 1, "status": "✅", "pypto_call": "pypto.sigmoid", "line": 1},
                      {"index": 2, "status": "✅", "pypto_call": "*", "line": line}],
             "verdict": "ok", "summary": "all covered"}
    good = {**wrong, "rows": [{**wrong["rows"][0], "line": line}, wrong["rows"][1]]}
    agents, provider, _ = _agents(tmp_path, [json.dumps(wrong), json.dumps(good)])
    result = agents.audit(_audit_ctx())
    assert result.verdict == "ok" and [r.line for r in result.rows] == [line, line]
    assert "does not contain the call" in provider.requests[1].messages[-1]["content"]
    assert f"{line:4d}|" in provider.requests[0].messages[1]["content"]  # numbered source


def test_verifier_can_block_but_never_pass_uncovered_rows(tmp_path: Path) -> None:
    answer = {"rows": [{"index": 1, "status": "✅", "pypto_call": "pypto.sigmoid", "line": _line_of("sigmoid")},
                       {"index": 2, "status": "❌"}], "verdict": "ok", "summary": "looks fine"}
    missing = {**answer, "rows": answer["rows"][:1]}
    agents, provider, _ = _agents(tmp_path, [json.dumps(missing), json.dumps(answer)])
    result = agents.audit(_audit_ctx())
    assert "[2]" in provider.requests[1].messages[-1]["content"]
    assert result.verdict == "block" and "blocked by the tool" in result.summary


# --------------------------------------------------------------------------------------------- debugger


def _debug_ctx() -> DebugContext:
    report = {"verdict": "FAIL_NUMERIC", "leaves": [{"name": "y", "max_diff": 0.5, "outliers": [[19, 3]]}],
              "golden_values": [1.0, 2.0], "nested": {"truth": [3.0], "keep": "yes"}}
    return DebugContext(op_dir=".", op_name="silu", module=1, failing_file="silu_impl.py", source=KERNEL,
                        report=report, attempt=2)


def test_debugger_proposal_is_checked_against_the_file(tmp_path: Path) -> None:
    line = _line_of("valid = ")
    current = KERNEL.splitlines()[line - 1]
    proposal = {"file": "silu_impl.py", "line_start": line, "line_end": line, "current_snippet": "valid = n",
                "proposed_snippet": current.replace("min(16)", "min(16)  # fixed"),
                "expected_effect": "tail rows match", "evidence": "outliers only in row 19 (tail)"}
    answer = {"diagnosis": "tail", "proposals": [proposal]}
    fixed = {"diagnosis": "tail", "proposals": [{**proposal, "current_snippet": current}]}
    agents, provider, _ = _agents(tmp_path, [json.dumps(answer), json.dumps(fixed)])
    result = agents.debug(_debug_ctx())
    assert result.proposals[0].current_snippet == current
    assert "does not match lines" in provider.requests[1].messages[-1]["content"]
    user = provider.requests[0].messages[1]["content"]
    assert "golden_values" not in user and "truth" not in user and '"keep": "yes"' in user


def test_debugger_rejects_other_files_then_fails_cleanly(tmp_path: Path) -> None:
    proposal = {"file": "golden.py", "line_start": 1, "line_end": 1, "current_snippet": "x",
                "proposed_snippet": "y", "expected_effect": "e", "evidence": "v"}
    agents, _, _ = _agents(tmp_path, [json.dumps({"diagnosis": "d", "proposals": [proposal]})] * 2,
                           max_repairs=1)
    with pytest.raises(AgentError, match="failing file"):
        agents.debug(_debug_ctx())


def test_every_role_records_prompt_hash_and_module(tmp_path: Path) -> None:
    agents, _, trace = _agents(tmp_path, [json.dumps({"diagnosis": "d", "proposals": []})] * 3, max_repairs=0)
    with pytest.raises(AgentError):
        agents.debug(_debug_ctx())
    event = TraceReader(tmp_path / "trace").llm_calls[0]
    assert (event.agent, event.module, event.attempt, event.node) == ("debugger", 1, 2, "debug")
    assert event.prompt_hash == agents.prompt_hashes["debugger"]


@pytest.mark.parametrize("content, taken", [
    ("Here is the kernel:\n\n```python\n" + KERNEL + "```\n\nIt tiles rows by 8.", True),
    ("First try:\n```python\n" + KERNEL + "```\nor this one:\n```python\n" + KERNEL + "```\n", False),  # which one?
    ("Here is the kernel:\n```python\ndef broken(:\n```\n", False),
])
def test_implementer_takes_the_one_fenced_file_out_of_prose_in_content(tmp_path: Path, content: str,
                                                                       taken: bool) -> None:
    agents, provider, _ = _agents(tmp_path, [json.dumps({"path": "silu_impl.py", "content": content}),
                                             json.dumps({"path": "silu_impl.py", "content": KERNEL + "# 2\n"})])
    result = agents.implement(_impl_ctx())
    assert result.content == (KERNEL if taken else KERNEL + "# 2\n")
    assert len(provider.requests) == (1 if taken else 2)
    if not taken:
        assert "not valid Python" in provider.requests[1].messages[-1]["content"]
