"""Campaign suites: folders of op dirs and task files, YAML files with per-task options, one-line mistakes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from orchestrator.adapters.campaign import load_suite
from orchestrator.errors import ForgeError

REPO = Path(__file__).resolve().parents[2]
TASK = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n" \
       "def get_inputs():\n    return [torch.randn(4, 4)]\n"


def _folder(tmp_path: Path) -> Path:
    root = tmp_path / "suite"
    for op in ("silu", "rms_norm"):
        dest = root / "ops" / op
        dest.mkdir(parents=True)
        for name in ("SPEC.md", "golden.py"):
            shutil.copy(REPO / "workspace" / op / name, dest / name)
    (root / "ops" / "silu" / "traces").mkdir()  # not searched inside an op dir
    (root / "level1").mkdir()
    (root / "level1" / "19_ReLU.py").write_text(TASK)
    (root / "level1" / "notes.py").write_text("print('not a task')\n")
    return root


def test_folder_suite_finds_op_dirs_and_task_files(tmp_path: Path) -> None:
    tasks = load_suite(_folder(tmp_path))
    assert [(t.id, t.kind, t.level) for t in tasks] == [
        ("level1/19_ReLU", "task_file", "level1"), ("ops/rms_norm", "opdir", "ops"), ("ops/silu", "opdir", "ops")]
    assert all(t.resources == {"CPU": 1.0} for t in tasks)


def test_yaml_suite_with_per_task_options(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    script = tmp_path / "script.yaml"
    script.write_text("design: []\n")
    suite = tmp_path / "suite.yaml"
    suite.write_text("""tasks:
  - suite/level1
  - path: suite/ops/silu
    id: my_silu
    level: mine
    agents: scripted:script.yaml
    budget: 3
    timeout: 60
    resources: {CPU: 1, NPU: 1}
""")
    tasks = load_suite(suite)
    assert [t.id for t in tasks] == ["level1/19_ReLU", "my_silu"]
    silu = tasks[1]
    assert silu.source == str((root / "ops" / "silu").resolve())
    assert (silu.level, silu.budget, silu.timeout) == ("mine", 3, 60.0)
    assert silu.agents == f"scripted:{script.resolve()}"
    assert silu.resources == {"CPU": 1.0, "NPU": 1.0}


@pytest.mark.parametrize(("text", "message"), [
    ("tasks:\n  - nowhere\n", "does not exist"),
    ("tasks: [", "not valid YAML"),
    ("jobs: []\n", "needs a `tasks:` list"),
    ("tasks:\n  - {path: suite/ops/silu, budget: 0}\n", r"tasks\[0\]\.budget"),
    ("tasks:\n  - {path: suite/ops/silu, colour: red}\n", r"tasks\[0\]\.colour"),
    ("tasks:\n  - suite/ops/silu\n  - suite/ops/silu\n", "two tasks have the id"),
    ("tasks:\n  - suite/level1/notes.py\n", "neither an op dir"),
])
def test_suite_mistakes_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    _folder(tmp_path)
    suite = tmp_path / "s.yaml"
    suite.write_text(text)
    with pytest.raises(ForgeError, match=message) as info:
        load_suite(suite)
    assert "\n" not in info.value.message


def test_empty_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ForgeError, match="no op dir"):
        load_suite(tmp_path)


def test_a_task_needing_a_resource_the_cluster_lacks_is_refused_in_one_line() -> None:
    from orchestrator.adapters.campaign._driver import _check_resources
    from orchestrator.adapters.campaign._suite import Task

    npu = Task(id="x", source="/x", kind="opdir", level="l", resources={"CPU": 1, "NPU": 1})
    _check_resources([npu], {"CPU": 2.0, "NPU": 8.0})
    with pytest.raises(ForgeError, match=r"task x needs NPU: 1, the cluster has 0 \(point --address at a cluster "
                                         r"with NPU hosts\)"):
        _check_resources([npu], {"CPU": 2.0})
