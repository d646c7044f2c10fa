"""``bench/first_call.py --bytecodes``: the Python work of a gym kernel's calls, counted the same on every run.

Why: session 46 steered issue #31 (the emulator's speed on the gym) by this count because timings on the shared
2-core machine move 1.5-2x within minutes; an instrument whose count changed between two runs of the same tree
(a set of strings iterated in hash order, a cache warmed by the counter itself) would make every A/B it reports
noise. Two fresh processes must agree exactly, and the first call (parse, trace, lower, prepare) must be the
largest - what the table says of attn_softmax.
"""

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GYM = (Path(os.environ.get("FORGE_SHARED") or ROOT.parent / "shared") / "gym").resolve()


def _bench():  # noqa: ANN202 - the bench script, imported by path (bench/ is not a package)
    spec = importlib.util.spec_from_file_location("first_call", ROOT / "bench" / "first_call.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


@pytest.mark.slow  # two fresh processes importing torch and counting every bytecode: ~10 s of CPU
def test_bytecode_counts_repeat_exactly_and_the_first_call_is_the_largest() -> None:
    if not (GYM / "ops" / "attn_softmax").is_dir():
        pytest.skip(f"the real gym operators are not here ({GYM}; set FORGE_SHARED)")
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed (the gym operator's wrapper needs it: pip install -e '.[toolchain]')")
    bench = _bench()
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONPATH=str(ROOT),
               TILE_FWK_DEVICE_ID="0")
    a = bench.bytecodes("attn_softmax", 5, env)
    b = bench.bytecodes("attn_softmax", 5, env)
    assert a["per_call"] == b["per_call"], (a["per_call"], b["per_call"])
    assert len(a["per_call"]) == 4 and all(n > 0 for n in a["per_call"])
    assert a["per_call"][0] == max(a["per_call"])
    assert a["funcs"] == b["funcs"] and len(a["funcs"]) == 5
    assert sum(n for _, n in a["files"]) == sum(a["per_call"])
    assert any(name.startswith("runtime/emulator/") for name, _ in a["files"]), a["files"][:3]
