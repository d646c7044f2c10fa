"""``torch.npu``'s runtime API and ``torch_npu.profiler`` in the stand-in (`runtime.emulator._torch_npu_runtime`).

A precision test's first lines switch HF32 off, print the device, save the generator: each was a bare
``AttributeError`` at the script's line before its kernel ran."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from runtime.emulator import _torch_npu_runtime as rt

torch = pytest.importorskip("torch", reason="the torch_npu stand-in's runtime API is torch's (pip install -e '.[toolchain]')")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def names() -> dict:
    return rt.runtime_names(torch, lambda: "Ascend910B1")


def test_hf32_switches_keep_the_vendor_defaults_and_record_a_setting(names: dict) -> None:
    assert names["matmul"].allow_hf32 is False and names["conv"].allow_hf32 is True  # torch_npu's defaults
    names["matmul"].allow_hf32 = True
    assert names["matmul"].allow_hf32 is True


def test_device_properties_memory_and_capability(names: dict) -> None:
    p = names["get_device_properties"](0)
    assert (p.name, p.total_memory, p.cube_core_num, p.vector_core_num) == ("Ascend910B1", 64 << 30, 24, 48)
    assert "name='Ascend910B1'" in repr(p) and "total_memory=65536MB" in repr(p)
    free, total = names["mem_get_info"]()
    # never (0, 0): a script dividing by it must not fail; free is what the NPU tensors do not reserve (s39)
    assert total == p.total_memory and free == total - names["memory_reserved"]() and free > 0
    assert names["get_device_capability"]() is None  # torch_npu returns None (no such concept in CANN)
    assert names["is_bf16_supported"]() is True
    assert names["get_amp_supported_dtype"]() == [torch.float16, torch.bfloat16]
    # s39: the statistics count the live NPU tensors (before: an empty dict and zeros; tests/gym/test_scripts_s39.py)
    stats = names["memory_stats"]()
    assert {"allocated_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.current"} <= set(stats)
    assert stats["allocated_bytes.all.current"] <= stats["allocated_bytes.all.peak"] <= names["max_memory_allocated"]()
    assert names["memory_cached"]() == names["memory_reserved"]() and "allocated" in names["memory_summary"]()


def test_the_generator_state_is_the_cpu_generators(names: dict) -> None:
    torch.manual_seed(3)
    state = names["get_rng_state"]()
    a = torch.randn(5)
    names["set_rng_state"](state)
    assert torch.equal(torch.randn(5), a)
    names["set_rng_state_all"](names["get_rng_state_all"]())
    assert names["initial_seed"]() == 3


def test_amp_autocast_is_cpu_autocast_in_the_asked_dtype(names: dict) -> None:
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    with names["amp"].autocast():
        assert (a @ b).dtype == torch.float16
    with names["amp"].autocast(dtype=torch.bfloat16):
        assert (a @ b).dtype == torch.bfloat16
    with names["amp"].autocast(enabled=False):
        assert (a @ b).dtype == torch.float32


def test_set_option_takes_a_dict(names: dict) -> None:
    names["set_option"]({"ACL_PRECISION_MODE": "must_keep_origin_dtype"})
    assert names["_get_option"]("ACL_PRECISION_MODE") == "must_keep_origin_dtype"
    with pytest.raises(TypeError, match="npu option must be a dict"):
        names["set_option"]("ACL_PRECISION_MODE")


def test_the_profiler_records_the_cpu_with_torch_npus_names(tmp_path: Path) -> None:
    prof = rt.profiler_module(torch)
    assert prof.supported_activities() == {"CPU", "NPU"} and "Level2" in prof.supported_profiler_level()
    cfg = prof._ExperimentalConfig(profiler_level=prof.ProfilerLevel.Level1, aic_metrics=prof.AiCMetrics.L2Cache,
                                   l2_cache=True)
    with prof.profile(activities=[prof.ProfilerActivity.NPU], schedule=prof.schedule(0, 1),
                      on_trace_ready=prof.tensorboard_trace_handler(str(tmp_path)), experimental_config=cfg) as p:
        torch.randn(64) * 2  # noqa: B018
        p.step()
    assert list(tmp_path.glob("*.json")), "the trace handler wrote no trace"
    with pytest.raises(ValueError, match="unknown profiler activities"):
        prof.profile(activities=["GPU"])


@pytest.mark.slow
def test_a_precision_scripts_set_up_lines_run_and_an_unknown_name_stops_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text(textwrap.dedent("""
        import torch, torch_npu
        torch.npu.matmul.allow_hf32 = False
        torch.npu.conv.allow_hf32 = False
        torch.npu.set_device(3)
        print("DEV", torch.npu.get_device_properties(torch.npu.current_device()).name, torch.npu.is_bf16_supported())
        with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.NPU]) as prof:
            with torch.npu.amp.autocast():
                y = torch.randn(4, 4, device="npu:3") @ torch.randn(4, 4, device="npu:3")
        print("AMP", y.dtype, type(prof).__name__)
        alloc = torch.npu.NPUPluggableAllocator("alloc.so", "my_malloc", "my_free")
    """))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PTO_FORGE_EMULATOR_CHILD")}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-m", "runtime.emulator", "--quiet", "s.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=180, check=False)
    assert "DEV Ascend910B1 True" in proc.stdout and "AMP torch.float16 profile" in proc.stdout, proc.stderr
    assert proc.returncode == 3, proc.stderr
    err = [ln for ln in proc.stderr.splitlines() if ln.startswith("ERROR")]
    assert len(err) == 1 and err[0].startswith(f"ERROR {tmp_path / 's.py'}:11: NotProvidedError: torch.npu."
                                               "NPUPluggableAllocator is not provided by the emulator's torch_npu stand-in"), proc.stderr
