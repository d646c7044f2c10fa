"""pyproject's explicit package list matches the tree (fast; the wheel test installs it).

Why explicit: ``prompts/`` and ``skills/`` are top-level folders (the design card's layout) shipped as the
packages ``agents.prompts`` and ``agents.skills`` through ``[tool.setuptools.package-dir]``, which
``packages.find`` cannot express. A package folder added to the tree but not to the list would be missing
from the wheel; this test says which.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOP = ("agents", "orchestrator", "runtime")


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def tree_packages(root: Path = ROOT) -> set[str]:
    """Every package of the tree by its import name (folders with ``__init__.py``, mapped ones included)."""
    names: set[str] = set()
    for top in TOP:
        for init in (root / top).rglob("__init__.py"):
            if "__pycache__" not in init.parts:
                names.add(".".join(init.parent.relative_to(root).parts))
    for name, folder in _config().get("package-dir", {}).items():
        if name:
            for init in (root / folder).rglob("__init__.py"):
                rel = init.parent.relative_to(root / folder).parts
                names.add(".".join((name, *rel)))
    return names


def test_package_list_matches_the_tree() -> None:
    listed = set(_config()["packages"])
    tree = tree_packages()
    assert tree - listed == set(), f"package folders missing from pyproject [tool.setuptools] packages: {sorted(tree - listed)}"
    assert listed - tree == set(), f"listed in pyproject but no such package folder: {sorted(listed - tree)}"


def test_prompts_and_skills_live_at_the_top_level() -> None:
    mapping = _config()["package-dir"]
    assert mapping == {"agents.prompts": "prompts", "agents.skills": "skills", "orchestrator.examples": "workspace"}
    assert not (ROOT / "agents" / "prompts").exists() and not (ROOT / "agents" / "skills").exists()
    import agents.prompts
    import agents.skills

    prompts, skills = Path(agents.prompts.default_prompts_dir()), Path(agents.skills.default_skills_dir())
    assert (prompts.name, skills.name) == ("prompts", "skills")  # the top-level folders, not agents/<name>
    assert (prompts / "designer.md").read_bytes() == (ROOT / "prompts" / "designer.md").read_bytes()


def test_the_check_sees_a_missing_package(tmp_path: Path) -> None:
    for rel in ("agents/x", "orchestrator", "runtime", "prompts", "skills", "workspace"):
        (tmp_path / rel).mkdir(parents=True, exist_ok=True)
        (tmp_path / rel / "__init__.py").write_text("")
    assert "agents.x" in tree_packages(tmp_path)
    assert {"agents.prompts", "agents.skills"} <= tree_packages(tmp_path)
