"""The differential-test generator (bench/difftest): deterministic, valid Python, runnable on the emulator."""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "difftest"


def _module(name: str):  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(f"difftest_{name}", BENCH / f"{name}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod  # dataclasses look their module up
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(BENCH))


def test_generator_is_deterministic_and_covers_the_features() -> None:
    gen = _module("generate")
    a, b = gen.generate(200, 0), gen.generate(200, 0)
    assert [k.source for k in a] == [k.source for k in b]
    assert gen.generate(5, 1)[0].source != a[0].source
    for k in a:
        ast.parse(k.source)
    feats = {f.split(":")[0] for k in a for f in k.features}
    assert {"unary", "binary", "scalar", "reduce", "tile", "struct", "bcast", "dtype", "op"} <= feats
    structs = {f for k in a for f in k.features if f.startswith("struct:")}
    assert {"struct:whole", "struct:row_loop", "struct:loop_unroll"} <= structs


def test_emulator_side_runs_and_matches_the_recorded_results(tmp_path: Path) -> None:
    gen, run = _module("generate"), _module("run")
    recorded = {r["kernel"]: r for r in json.loads((BENCH / "results.json").read_text())["kernels"]}
    assert len(recorded) >= 200
    for k in gen.generate(25, 0):
        path = tmp_path / f"{k.name}.py"
        path.write_text(k.source)
        assert run.emulator_outcome(path)["status"] == recorded[k.name]["emulator"]["status"], k.name
