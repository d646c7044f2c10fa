"""One definition per concept (issue #27): each test pins the one reader/writer and fails on a second one."""

from __future__ import annotations

import json
import re
from pathlib import Path

from orchestrator import api
from orchestrator.adapters.scripted import ScriptedAgents
from orchestrator.core import opdir_bridge
from runtime.frontmatter import split_front_matter
from runtime.lint._opdir import front_matter as lint_front_matter
from runtime.opdir import intake

ROOT = Path(__file__).resolve().parents[2]


def _sources() -> dict[Path, str]:
    out = {}
    for top in ("agents", "orchestrator", "runtime", "prompts", "skills"):
        for p in (ROOT / top).rglob("*.py"):
            out[p.relative_to(ROOT)] = p.read_text(encoding="utf-8")
    return out


def test_a_spec_with_a_byte_order_mark_is_read_the_same_by_intake_run_and_lint(op_copy) -> None:
    plain = op_copy("affine")
    text = (plain / "SPEC.md").read_text(encoding="utf-8")
    bom = plain.parent / "affine_bom"
    bom.mkdir()
    for name in ("golden.py",):
        (bom / name).write_bytes((plain / name).read_bytes())
    (bom / "SPEC.md").write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    front = split_front_matter(text).data
    assert front and front["op_name"] == "affine"
    assert intake(bom, timeout=30).ok                           # intake (runtime.opdir)
    assert opdir_bridge.load(bom).spec_front == front          # what a run keeps in state (was {} with a BOM)
    assert lint_front_matter((bom / "SPEC.md").read_text(encoding="utf-8"))[0] == front  # lint's op-dir context
    assert api.check_op_dir(bom) == "affine"


def test_front_matter_is_split_in_one_place() -> None:
    pattern = re.compile(r"""lines\[0\]\.strip\(\) != ["']---["']|startswith\(["']---["']\)""")
    owners = sorted(str(p) for p, text in _sources().items() if pattern.search(text))
    assert owners == ["runtime/frontmatter.py"], owners


def test_the_trace_manifest_carries_the_seeds_the_run_used(op_copy, script, verifier, clock) -> None:
    op = op_copy("affine")
    spec = (op / "SPEC.md").read_text(encoding="utf-8").replace("seeds: [0, 1, 2]", "seeds: [3, 4, 5]")
    (op / "SPEC.md").write_text(spec, encoding="utf-8")
    s = script("affine", implement={1: ["impl.py"]})
    r = api.run(op, api.RunOptions(approve="auto", run_id="t1"),
                inject=api.Injected(agents=ScriptedAgents(s), verifier=verifier, clock=clock))
    assert r.status == "delivered"
    manifest = json.loads((op / ".forge" / "run-t1" / "trace" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["seeds"] == [3, 4, 5]


def test_verdicts_are_one_enum() -> None:
    """In the verifier and the orchestrator, verdict names appear as string literals only in their definition
    (runtime/verdicts.py); ``AGENT_ERROR`` (an implementer without a usable answer: nothing was verified) is an
    attempt outcome defined there too, never a verifier verdict. Lint statuses and bisect statuses are other vocabularies, not checked here."""
    from runtime.verdicts import Verdict

    names = [v.value for v in Verdict] + ["AGENT_ERROR"]
    literal = re.compile("[\"'](" + "|".join(names) + ")[\"']")
    owners = sorted(str(p) for p, text in _sources().items()
                    if (p.parts[0] == "orchestrator" and p.parts[1] != "adapters")  # adapters parse foreign logs
                    or p.parts[:2] == ("runtime", "verify") or p.name == "verdicts.py"
                    if literal.search(text))
    assert owners == ["runtime/verdicts.py"], owners
    import runtime.verify

    assert runtime.verify.Verdict is Verdict and Verdict("PASS") == "PASS"
    assert "AGENT_ERROR" not in [v.value for v in Verdict]


def test_stored_reports_are_read_in_one_place() -> None:
    """Only orchestrator/store/reports.py turns a stored verify report back into data (a typed VerifyReport)."""
    pattern = re.compile(r"reports_dir\(.*\.json|VerifyReport\.model_validate")
    owners = sorted(str(p) for p, text in _sources().items() if p.parts[0] == "orchestrator" and pattern.search(text))
    assert owners == ["orchestrator/store/reports.py"], owners


def test_stage_file_names_are_defined_in_one_place() -> None:
    """Only runtime/stages.py spells the stage-file pattern; the orchestrator names files with it and lint,
    the verifier and bisection read names back with it (bisection used to take the suffix's last digit)."""
    pattern = re.compile(r"_module\{|_module\(\?P|_module\(\\d|_module\\d")
    owners = sorted(str(p) for p, text in _sources().items() if pattern.search(text))
    assert owners == ["runtime/stages.py"], owners
    from runtime.stages import parse_stage_name, stage_file

    name = parse_stage_name(stage_file("op", 10), "op")
    assert name.kind == "stage" and name.module == 10 and name.suffix == "12345678910"
    assert parse_stage_name("modules/op_module13_impl.py").error  # not a cumulative suffix


def test_the_delivery_readme_is_composed_in_one_place() -> None:
    owners = sorted(str(p) for p, text in _sources().items()
                    if re.search(r"README\.md\"\)\.write_text|(?<!def )render_readme\(", text) and p.parts[0] == "orchestrator")
    assert owners == ["orchestrator/core/delivery.py"], owners
