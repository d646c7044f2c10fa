"""SPEC.md's node tree is composed by libyaml when PyYAML has it (runtime.yamlio.compose_yaml): the line of every
key and list item, and every duplicate-key problem, must be exactly what the pure-Python loader gives."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from runtime import yamlio
from runtime.opdir import _spec

REPO = Path(__file__).resolve().parents[2]
SPECS = sorted(p for p in REPO.rglob("SPEC.md") if ".venv" not in p.parts and ".git" not in p.parts)

DUPLICATE = "op_name: a\ninputs:\n  - {name: x, shape: [B], dtype: fp32}\nop_name: b\n"


def _lines(yaml_text: str, loader: object) -> tuple[dict, list]:
    node = yaml.compose(yaml_text, Loader=loader)  # type: ignore[arg-type]
    lines, problems = _spec._line_map(node, 1, "SPEC.md")
    return lines, [str(p) for p in problems]


@pytest.mark.skipif(yamlio._C_LOADER is None, reason="PyYAML built without libyaml: nothing to compare")
def test_libyaml_and_python_loader_give_the_same_lines_for_every_spec_in_the_repo() -> None:
    assert len(SPECS) >= 10
    for path in SPECS:
        fm = _spec.split_front_matter(path.read_text(encoding="utf-8"))
        if fm.problem:
            continue
        text, _ = _spec._front_matter(path.read_text(encoding="utf-8"), "SPEC.md")
        assert _lines(text, yaml.CSafeLoader) == _lines(text, yaml.SafeLoader), path
    assert _lines(DUPLICATE, yaml.CSafeLoader) == _lines(DUPLICATE, yaml.SafeLoader)
    assert _lines(DUPLICATE, yaml.SafeLoader)[1]  # the duplicate key is reported by both


def test_a_yaml_syntax_error_is_worded_by_the_python_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = "---\nop_name: a\ninputs: [\n---\n"
    with pytest.raises(_spec.OpDirError) as fast:
        _spec.parse_spec_text(bad)
    monkeypatch.setattr(yamlio, "_C_LOADER", None)
    with pytest.raises(_spec.OpDirError) as slow:
        _spec.parse_spec_text(bad)
    assert [str(p) for p in fast.value.problems] == [str(p) for p in slow.value.problems]
    assert "YAML syntax error" in str(fast.value.problems[0])



def test_a_range_bound_without_a_dot_before_its_exponent_is_a_number() -> None:
    """``1e-05`` is a float to YAML 1.2 and to every SPEC author; PyYAML's 1.1 resolver makes it a string, so
    ``range: [1e-05, 1.0]`` was refused as "not two numbers" (the input-range property test found it in a fresh
    environment, s38). The YAML loader itself is left alone: an unquoted ``12e456`` another writer dumped stays text."""
    from runtime.opdir import parse_spec_text

    assert yamlio.load_yaml("a: 12e456") == {"a": "12e456"}
    text = (Path(__file__).resolve().parents[2] / "workspace" / "silu" / "SPEC.md").read_text()
    start = text.index("range: [")
    end = text.index("]", start)
    parsed = parse_spec_text(text[:start] + "range: [1e-05, 1.0000102" + text[end:])
    assert any(t.range == (1e-05, 1.0000102) for t in parsed.inputs)
    with pytest.raises(Exception, match="two numbers"):
        parse_spec_text(text[:start] + "range: [low, 1.0" + text[end:])
