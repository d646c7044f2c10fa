"""The one rule table: every rule's id, severity, stages, title, fix hint and source.

Everything that describes a rule lives here and nowhere else: the checks look up their severity and fix
hint here, the CLI and the JSON output copy the title from here, and ``skills/lint-rules.md`` (what the
agents read) is generated from this table, so agents and lint cannot disagree. Upstream rules that do not
apply to PTO Forge stay in the table with ``applies=False`` and the reason, so nothing is dropped silently.
Rule ids are never reused.
"""

from __future__ import annotations

from runtime.lint._model import RuleInfo

__all__ = ["RULES", "rule"]

_M = ("module", "final")
_ALL = ("design", "module", "final")
_WF = "spec/workflow.md Part B §7"
_PA = "spec/workflow.md Part A"
_LR = "spec/lint-rules.md"

# id, severity, stages, family, title, fix, doc
_APPLICABLE: list[tuple[str, str, tuple[str, ...], str, str, str, str]] = [
    ("OL01", "S0", _M, "rules_entry", "JIT kernels are decorated with the literal `@pypto.frontend.jit` (one or "
     "several per file, behind one wrapper)",
     "decorate every kernel with `@pypto.frontend.jit`; no aliases such as `jit` or `pt.frontend.jit`", _WF),
    ("OL02", "S1", _M, "rules_body", "a JIT parameter is never re-bound (`param = ...`, `param += ...`)",
     "write outputs with `param[:] = ...`, `param.move(...)` or `pypto.assemble(...)`", _WF),
    ("OL03", "S1", _M, "rules_body", "no `return` inside a JIT function (nested defs included)",
     "write results into output parameters instead of returning them", _WF),
    ("OL04", "S1", _M, "rules_tiling", "the JIT function (or a helper it calls) sets tile shapes",
     "call `pypto.set_vec_tile_shapes(...)` / `pypto.set_cube_tile_shapes(...)` before the first op", _WF),
    ("OL05", "S1", _M, "rules_entry", "every JIT parameter is annotated; tensors with `pypto.Tensor(...)`",
     "annotate tensors `pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)`; scalars `int`/`float`", _WF),
    ("OL06", "S1", _M, "rules_body", "no builtin `min(...)` / `max(...)` inside a JIT function",
     "use `pypto.minimum/maximum` for tensors, `sym.min(x)` / `sym.max(x)` for symbolic scalars", _WF),
    ("OL07", "S0", _M, "rules_entry", "pypto is imported exactly as a plain module-level `import pypto`",
     "write `import pypto` and spell every call `pypto.<name>`; no `as` alias, no `from pypto import`", _WF),
    ("OL08", "S1", _M, "rules_entry", "the file defines a module-level `*_wrapper` function",
     "add `<op>_module<sfx>_wrapper` (stage file) or `<op>_wrapper` (final file)", _WF),
    ("OL12", "S1", ("design",), "rules_design",
     "DESIGN.md exists and has the sections Computation graph / API mapping, Tiling, Decomposition, "
     "Verification plan",
     "add headings containing `Computation graph` (or `Compute graph` / `API mapping`), `Tiling`, "
     "`Decomposition`, `Verification plan`", f"{_WF} (OL12, English headings)"),
    ("OL15", "S1", _ALL, "rules_design", "golden.py does not import pypto (`.T` / `.t()` is a warning)",
     "keep golden.py pure numpy/torch; transpose with explicit axes (`np.swapaxes`)", _WF),
    ("OL16", "S1", _M, "rules_host", "a kernel file never imports the golden",
     "import golden code only in tests; the verifier runs golden.py in its own process", _WF),
    ("OL23", "S2", _M, "rules_body", "the JIT function has a loop structure",
     "tile with `pypto.loop(...)` + `view` + `assemble`, or state in DESIGN.md why no loop is needed", _WF),
    ("OL25", "S1", _M, "rules_entry", "tensor annotations give an explicit shape (FAIL) and dtype (WARN)",
     "write `pypto.Tensor([pypto.DYNAMIC, 16, 64], pypto.DT_FP32)`, not `pypto.Tensor()`", _WF),
    ("OL26", "S1", _M, "rules_entry", "tensor parameters come before every non-tensor parameter",
     "move all `pypto.Tensor` parameters to the front of the JIT signature", _WF),
    ("OL28", "S2", _M, "rules_entry", "sigmoid/softmax/sin/cos are fed FP32 tensors",
     "cast to `pypto.DT_FP32` before sigmoid/softmax/sin/cos and back afterwards", _WF),
    ("OL29", "S2", _M, "rules_entry", "some JIT tensor annotation marks a runtime axis `pypto.DYNAMIC`",
     "mark runtime-sized axes `pypto.DYNAMIC` so one kernel serves every shape", _WF),
    ("OL31", "S1", _M, "rules_crossfile", "DESIGN.md dynamic_axes non-empty => the JIT annotations use DYNAMIC",
     "mark the axes listed in DESIGN.md `dynamic_axes` as `pypto.DYNAMIC` in the JIT signature", _WF),
    ("OL33", "S2", ("final",), "rules_crossfile",
     "`<op>_wrapper` takes as many required parameters as `golden(...)`",
     "align the wrapper's parameters with the golden's tensor inputs", _WF),
    ("OL37", "S3", _M, "rules_crossfile", "intermediate names in the kernel follow the DESIGN.md pseudocode",
     "reuse the DESIGN.md pseudocode names for intermediates", _WF),
    ("OL41", "S1", _ALL, "rules_text", "no pasted lint output in kernel or golden files",
     "delete the pasted lint report text from the file", _WF),
    ("OL43", "S1", _M, "rules_crossfile", "DESIGN.md declares dynamic axes => the kernel loops with `pypto.loop`",
     "iterate the dynamic axis with `pypto.loop(...)` + `view(..., valid_shape=...)` + `assemble`", _WF),
    ("OL45", "S0", _M, "rules_host", "the wrapper calls the JIT kernel exactly once, never in a loop",
     "call the kernel once from the wrapper; loop over tiles inside the kernel with `pypto.loop`", _WF),
    ("OL46", "S2", _M, "rules_loops", "no redundant `pypto.loop(1)` next to a real loop in an `*_impl` function",
     "drop the `pypto.loop(1)` wrapper loop", _WF),
    ("OL47", "S3", _M, "rules_tiling", "an `*_impl` function with several `pypto_*` stages sets tiles per stage",
     "set tile shapes inside each stage helper instead of once at the top", _WF),
    ("OL48", "S0", _M, "rules_tiling", "tile shapes are compile-time ints: literals, constants, loop_unroll factors, "
     "range indices (cube tiles: 0 < L0 <= L1, L1 % L0 == 0)",
     "use int literals or module constants for tile sizes; never runtime values", _WF),
    ("OL49", "S1", _M, "rules_loops", "`unroll_list=` only on the innermost `pypto.loop`",
     "move `unroll_list` to the innermost loop", _WF),
    ("OL50", "S1", _M, "rules_crossfile", "wrapper name and parameters = primary inputs of module_interfaces.yaml, "
     "in order (a stage wrapper: all of them or those its modules read)",
     "name the wrapper `<op>_module<sfx>_wrapper`/`<op>_wrapper` with the primary inputs as parameters "
     "(golden-fed extras only on `# STUB:` lines, after them)", f"{_WF}; {_PA}"),
    ("OL51", "S1", _M, "rules_writeback", "every declared output is written back, from real compute",
     "write each output with `assemble`/`[:]`/`move` from a value computed by pypto ops", _WF),
    ("OL52", "S1", _M, "rules_api", "`pypto.view` shape, offsets and valid_shape have the same rank",
     "give shape/offsets/valid_shape one entry per axis; change rank with `pypto.reshape`", _WF),
    ("OL53", "S2", _M, "rules_memory", "MEMORY.md golden inventory rows in scope are ✅",
     "implement the missing golden operations and mark each row ✅ with the pypto call and line", _WF),
    ("OL55", "S0", _ALL, "rules_api", "every `pypto.<name>` exists in the PyPTO API",
     "use an existing API name (e.g. `zeros/ones/full` instead of `empty`)", f"{_WF}; spec/pypto-api.md"),
    # stage-aware (issue #25): several values FAIL until the performance stage, which lints with the final rules,
    # and are allowed there and in imported code declared tuned (SPEC.md `imported: {tuned: true}`); the finding
    # names the stage and the reason. (Title and fix kept: the agents' skills page is generated from this row.)
    ("OL56", "S1", _ALL, "rules_loops", "`unroll_list` holds a single value",
     "use one unroll factor, e.g. `unroll_list=[1]`", _WF),
    ("OL57", "S0", _M, "rules_body", "JIT-graph code loops only with `pypto.loop`/`loop_unroll`/`range`",
     "replace `while`, other `for` iterators and comprehensions over pypto calls by `pypto.loop` or `range`", _WF),
    ("OL58", "S0", _M, "rules_host", "the wrapper allocates outputs on the host (no `pypto.zeros/ones/full/empty`)",
     "allocate outputs with `np.empty`/`np.zeros` (or torch) in the wrapper and pass them to the kernel", _WF),
    ("OL61", "S1", _M, "rules_api", "legal direct casts; in add/sub/mul/div the tensor comes first and scalars "
     "are plain numbers (no `pypto.Element`); zeros/ones take `dtype=` by keyword",
     "cast in two steps via FP32/FP16 where needed; put the tensor first; pass plain scalars; write `dtype=`", _WF),
    ("OL62", "S0", _M, "rules_host", "no math outside the JIT graph (host code only allocates and lays out data)",
     "move the computation into the JIT kernel; host code may only allocate, reshape and call the kernel", _WF),
    # --- PTO Forge rules (security / integrity)
    ("PF00", "S0", _ALL, "engine", "the file is readable UTF-8 and parses as Python 3.11",
     "fix the syntax error", _LR),
    ("PF01", "S0", _M, "rules_security", "kernel files import only pypto, numpy, math, torch, dataclasses, typing, functools, ml_dtypes",
     "remove the import; kernels need nothing else", _LR),
    ("PF02", "S0", _M, "rules_security", "no process/network/reflection/file access (subprocess, socket, ctypes, os.system, "
     "importlib, inspect, sys._getframe, globals/locals/vars, open, eval/exec, builtins or module mutation)",
     "delete the call; a kernel only computes", _LR),
    ("PF03", "S0", _M, "rules_security", "no try/except (or suppress) around the JIT kernel call",
     "call the kernel directly and let errors propagate to the verifier", _LR),
    ("PF04", "S0", _M, "rules_security", "no branch on an environment variable choosing between compute paths",
     "compute one way, unconditionally", _LR),
    ("PF05", "S0", ("module",), "rules_frozen", "verified (frozen) module regions are unchanged from the previous stage",
     "restore the frozen `# --- Module Mk ---` region verbatim; change it only after a rollback to Mk", _PA),
    ("PF06", "S1", ("design",), "rules_design", "module_interfaces.yaml follows the schema and the validate_yaml checks",
     "fix the listed key so ids, sources, shapes and dtypes are consistent", "spec/workflow.md Part B §5"),
    ("PF07", "S1", ("design",), "rules_design", "DESIGN.md front matter has op_name and dynamic_axes (list); module_count, if given, is an int >= 1",
     "start DESIGN.md with a `---` YAML block holding op_name, dynamic_axes (and module_count)",
     "spec/workflow.md Part B §3.3, §4"),
    ("PF08", "S1", ("final",), "rules_frozen", "the final `<op>_impl.py` has no `# STUB:` lines",
     "remove golden-fed stub inputs; the final kernel computes every module itself", _PA),
    ("PF10", "S0", _M, "rules_security", "no host write into a kernel buffer after the kernel call (through aliases, "
     "copies, views or helper functions too)",
     "return what the kernel wrote; any post-processing belongs inside the JIT kernel", _LR),
    ("PF11", "S0", _M, "rules_state", "no state across calls: module and class attributes hold constants, functions "
     "or read-only tables; no `global`/`nonlocal`, function attributes, mutable defaults, caches, or writes to names "
     "a function does not bind",
     "keep the wrapper stateless: allocate per call and pass everything to the JIT kernel as arguments", _LR),
    ("PF09", "S1", ("module",), "rules_frozen", "a stage file marks modules 1..k with `# --- Module Mk: <role> ---` in order",
     "add one marker comment per module inside the kernel, in module order", _PA),
]

_KERNEL = "OL02 OL03 OL04 OL05 OL06 OL23 OL25 OL26 OL28 OL29 OL46 OL48 OL49 OL51 OL52 OL55 OL56 OL57 OL61"
_CROSS = "OL31 OL33 OL37 OL43 OL50 OL53 PF05"
_DESIGN = "OL12 OL15 PF06 PF07"
_SCOPE = {**{r: "kernel" for r in _KERNEL.split()}, **{r: "cross" for r in _CROSS.split()},
          **{r: "design" for r in _DESIGN.split()}}

_NA_NPU = "no NPU device: PTO Forge verifies on the CPU emulator"
_NA_TEST = "PTO Forge writes no test files: the verification tool builds the cases from SPEC.md"
_NA_STATE = "the upstream state file is replaced by the LangGraph state and checkpointer"

# id, severity, upstream title, reason
_NOT_APPLICABLE: list[tuple[str, str, str, str]] = [
    ("OL09", "S1", "SPEC.md schema and Chinese headings",
     "SPEC.md is validated by runtime.opdir intake (front matter); Chinese headings are not used"),
    ("OL10", "S1", "API_REPORT.md headings", "no API_REPORT.md in PTO Forge; Chinese headings are not used"),
    ("OL11", "S2", "golden importable within 10 s", "checked by runtime.opdir when it runs golden.py in its own process"),
    ("OL13", "S1", "cleanup trio impl/test/README", "no test files; README is written by the report node"),
    ("OL14", "S1", "stage-5 completed in the state file", _NA_STATE),
    ("OL17", "S1", "test file defines no JIT", _NA_TEST),
    ("OL18", "S1", "test imports impl and golden", _NA_TEST),
    ("OL19", "S1", "test uses detailed_tensor_compare", _NA_TEST),
    ("OL20", "S1", "test reads TILE_FWK_DEVICE_ID", f"{_NA_TEST}; {_NA_NPU}"),
    ("OL21", "S2", "level-0/level-1 test markers", _NA_TEST),
    ("OL22", "S2", "test seeds manual_seed", _NA_TEST),
    ("OL24", "S1", "state file schema", _NA_STATE),
    ("OL30", "S2", "test covers every supported dtype", _NA_TEST),
    ("OL32", "S2", "test tolerance vs SPEC tolerance", "tolerances come from SPEC.md only (frozen at the design gate)"),
    ("OL34", "S1", "test covers P0 shapes", f"{_NA_TEST}; p0_shapes are validated by runtime.opdir"),
    ("OL39", "S1", "SPEC/DESIGN/API_REPORT front matter present (strict mode)",
     "SPEC front matter: runtime.opdir intake; DESIGN front matter: PF07"),
    ("OL40", "S1", "front matter key types (strict mode)", "SPEC: runtime.opdir intake; DESIGN: PF07"),
    ("OL42", "S1", "no run_mode='sim' default when an NPU exists", _NA_NPU),
    ("OL44", "S1", "module trio impl/golden/test for the active phase",
     "module goldens come from golden.py intermediates and no test files are written"),
    ("OL54", "S1", "MEMORY phase self-review checklist (Chinese keywords)",
     "MEMORY.md is rendered by tools, not written by agents; the verify report is the evidence"),
    ("OL59", "S1", "GOLDEN_PERF_REPORT.md present", "no NPU profiling of the golden"),
    ("OL60", "S0", "test calls reach a JIT through the impl", f"{_NA_TEST}; OL45 checks the wrapper reaches the JIT"),
]


def _build() -> dict[str, RuleInfo]:
    table: dict[str, RuleInfo] = {}
    for rid, sev, stages, family, title, fix, doc in _APPLICABLE:
        table[rid] = RuleInfo(id=rid, severity=sev, stages=stages, title=title, fix=fix, doc=doc,
                              scope=_SCOPE.get(rid, "file"), family=f"_{family}" if family != "engine" else "_engine")
    for rid, sev, title, reason in _NOT_APPLICABLE:
        table[rid] = RuleInfo(id=rid, severity=sev, stages=(), title=title, fix="", doc=_WF,
                              applies=False, not_applicable_reason=reason)
    return dict(sorted(table.items()))


RULES: dict[str, RuleInfo] = _build()
"""The rule table, keyed by rule id, sorted."""


def rule(rule_id: str) -> RuleInfo:
    """Look up a rule; an unknown id is a programming error (never a silent skip)."""
    try:
        return RULES[rule_id]
    except KeyError:
        raise KeyError(f"unknown lint rule id {rule_id!r}") from None
