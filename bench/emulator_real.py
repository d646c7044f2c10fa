"""The emulator on real workloads: every gym operator as its user runs it, and every workspace op, against the golden.

    python bench/emulator_real.py [op ...] [--no-gym] [--no-workspace] [--no-profile] [--gym-repeat N] [--json FILE]

**Gym** (``$FORGE_SHARED/gym`` or ``<repo>/../shared/gym``): each operator runs exactly as ``runs.tsv`` says
(``cd ops/<dir> && TILE_FWK_DEVICE_ID=0 PYTHONPATH=<op>/src python -m runtime.emulator <command>``) - two in the
setting their test is written for instead (``SETTING``: quant_batch_matmul on a 950, gqa_decode_attn installed) - with one
BLAS/OpenMP thread (a fair, stable comparison on a shared machine) and ``bench/emulator_real_hook`` on the
``PYTHONPATH`` (a ``sitecustomize`` that times every kernel call and every call of the vendor's golden - the
function, or lines of a function, named in ``GOLDEN`` below - and measures the peak memory of each kernel call;
see that file). A second run under py-spy gives the breakdown (it gets `PROFILE_GRACE_S` + `PROFILE_FACTOR` x the
plain run's wall time; a profiled run that hangs is killed with its process group and leaves the breakdown empty).

**Workspace**: each op's kernel is the one its shipped trace delivers (replayed offline into a scratch copy);
its wrapper and ``golden.py`` run on every SPEC case in this process: ``cold`` = the first call of each case
(nothing cached but what earlier cases of the same call signature left - what one verification pays), ``warm``
= the best of the next N calls (the trace cache's steady state, as for repeated calls of a signature).

Columns (gym): ``emu ms`` = CPU milliseconds inside kernel calls (tracing + lowering + execution), ``golden ms`` =
CPU milliseconds inside the golden on the same inputs, ``x`` = their ratio, ``x -gc`` = the same without the
cyclic collector's time on either side; ``trace``/``lower``/``exec``/``other``
split the emulator's time (``other``: the call's own bookkeeping - cache key, session, result - and the cyclic
collector), ``gc`` = the collector's share of it (which call a collection lands in depends on every allocation of
the process and of this instrumentation: a young collection ~0.3 ms, the middle generation 1.5-4.5 ms on the small
operators - a lottery of +-2-4 ms per row), ``g gc`` = the collector's time inside the golden; the breakdown columns are shares of the execution time in a second run sampled by py-spy
with native frames (optional: ``pip install py-spy``): ``interp`` = the executor's own Python per op and per
tile (the interpreter's C code included), ``numpy`` = numpy/BLAS code, ``copy`` = copies, fills and
allocation, ``dtype`` = conversions to float32 and rounding to bf16/fp16, ``checks`` = poison, bounds and
index checks (everything under those functions); ``peak/args`` = the largest (kernel arguments + memory the call added at its peak) / kernel
arguments over the op's kernel calls, ``args MB`` = that call's argument bytes; with ``--gym-repeat N`` every
operator runs in N fresh processes, the times are the median run's (``--gym-stat best``: the least) and ``x per
run`` is the range of the N runs' own ratios (``FORGE_EMUREAL_HOOK=DIR`` runs another hook folder, for experiments). CPU time, not wall time: the
machine is shared. Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from signal import SIGKILL
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HOOK = Path(os.environ.get("FORGE_EMUREAL_HOOK") or Path(__file__).resolve().parent / "emulator_real_hook")
PROFILE_GRACE_S, PROFILE_FACTOR = 120.0, 10.0
"""the profiled run's time limit: this many seconds plus this many times the plain run's wall time"""
THREADS = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}

GOLDEN: dict[str, list[dict[str, Any]]] = {
    "attn_softmax": [{"func": "attn_softmax_golden"}],
    "gqa_decode_attn": [{"func": "gqa_decode_attn_golden"}],
    "rms_norm": [{"func": "RMSNorm_golden"}],
    "sum_lstm": [{"func": "sum_lstm_golden"}],
    # the golden is inline: test_swiglu_precision's "Torch baseline" lines (150-157; 146-153 timed the traceback
    # printing of a failed kernel call)
    "swiglu_mlp": [{"func": "test_swiglu_precision", "lines": [150, 157]}],
    "apply_adam_w_v2": [{"func": "apply_adam_w_v2_golden"}],
    "mhc_sinkhorn": [{"func": "mhc_sinkhorn_golden"}],
    "interleave_rope": [{"func": "interleave_rope_golden"}],
    "gather_pa_kv_cache": [{"func": "gather_pa_kv_cache_golden"}],
    # gen_golden also runs in golden-only self-tests without a kernel: count the kernel test's calls only
    "quant_batch_matmul": [{"func": "gen_golden", "caller": "test_quant_batch_matmul"}],
    "llada2_gate_select": [{"func": "reference_amax"}],
    "gated_delta_rule": [{"func": "chunk_gated_delta_rule_golden"}],
    "flash_attention_score_grad": [{"func": "flash_attention_score_grad_golden"}],
    "sigmoid": [{"func": "Sigmoid_golden"}],
    # inline: the two torch.sum lines of run_bn_reduce_case
    "bn_training_reduce": [{"func": "run_bn_reduce_case", "lines": [136, 137]}],
}
"""Where each vendor test computes its reference (verbatim files: line numbers are those of SOURCES.md's commit)"""

SETTING: dict[str, dict[str, Any]] = {
    # the test declares @pytest.mark.soc("950", "910"): FP8 matmul exists on the Ascend 950 only (probe f10)
    "quant_batch_matmul": {"flags": ["--npuarch", "DAV_3510"]},
    # its per-case children import `src.pypto_gym...` from the gym root, which resolves with the gym installed
    # (`pip install -e .`, nothing exported): PYTHONPATH unset, <op>/src through --site-path. The hook and this
    # checkout still need the PYTHONPATH; its trailing empty entry is the working directory the unset one gives
    "gqa_decode_attn": {"installed": True},
}
"""The setting a test is written for, where runs.tsv's line is not it (docs/emulator-fidelity.md: both fail
as runs.tsv says, the first on an A2/A3 device, the second under plain ``python`` with that ``PYTHONPATH``)"""

CATS = ("interpretation", "numpy kernels", "copies/alloc", "dtype conversion", "checks")
_CHECK_FUNCS = {"is_poison", "check_poison", "check_index", "_check_parallel_overlap", "_final_poison_check",
                "_views_full", "check_alloc"}
_DTYPE_FUNCS = {"compute", "cast_array", "narrow_float", "_step", "_round_int"}
_COPY_FUNCS = {"poison_array", "poison", "full", "copy", "ascontiguousarray", "concatenate"}


def classify(frames: list[str]) -> str | None:
    """The breakdown category of one py-spy sample (a stack, root first); None outside kernel calls."""
    names = [f.split(" (")[0].rsplit(".", 1)[-1] for f in frames]  # py-spy qualifies names (Class.method)
    if "timed_call" not in names:
        return None
    names = names[names.index("timed_call"):]
    frames = frames[len(frames) - len(names):]
    if "timed_lower" in names:
        return "lowering"
    if "timed_program" in names:
        return "tracing"
    if any(n in _CHECK_FUNCS for n in names):
        return "checks"
    if any(n in _DTYPE_FUNCS for n in names):
        return "dtype conversion"
    leaf, leaf_name = frames[-1], names[-1]
    where = leaf[leaf.rfind("(") + 1:].rstrip(")")
    if ".py:" in where or "libpython" in where:
        py = [n for f, n in zip(frames, names, strict=True) if ".py:" in f]
        return "copies/alloc" if py and py[-1] in _COPY_FUNCS else "interpretation"
    low = leaf_name.lower()
    if "ml_dtypes" in where or "cast" in low or "half" in low or "bfloat" in low:
        return "dtype conversion"
    if "libc" in where or "kernel" in where or any(w in low for w in ("assign", "copy", "strided_to", "contig_to",
                                                                       "memmove", "memcpy", "memset", "fill")):
        return "copies/alloc"
    return "numpy kernels"


def pyspy_breakdown(raw: Path) -> dict[str, float]:
    """Sample counts per category from py-spy's raw output (``frame;frame;... count`` per line)."""
    cats: dict[str, float] = {}
    for line in raw.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        c = classify(stack.split(";"))
        if c is not None:
            cats[c] = cats.get(c, 0.0) + int(n)
    return cats


def pyspy() -> str | None:
    """The py-spy binary (optional: ``pip install py-spy``; without it the breakdown columns stay empty)."""
    import shutil

    cand = Path(sys.executable).parent / "py-spy"
    return str(cand) if cand.exists() else shutil.which("py-spy")


def shared() -> Path:
    """The shared folder, absolute (gym runs change into their operator's folder; see gym_runs.gym_dir)."""
    return Path(os.environ.get("FORGE_SHARED") or ROOT.parent / "shared").resolve()


# ---- gym ------------------------------------------------------------------------------------------------

def gym_rows(gym: Path) -> list[tuple[str, str, str, str]]:
    rows = []
    for line in (gym / "runs.tsv").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, folder, command, signal = line.split("\t")[:4]
            rows.append((name, folder, command, signal.strip()))
    return rows


def gym_command(gym: Path, name: str, command: str, extra: list[str]) -> tuple[list[str], str]:
    """The command line of a gym operator's run and its ``PYTHONPATH``: runs.tsv's line, in the `SETTING` its test
    is written for, with the hook and this checkout importable."""
    setting = SETTING.get(name, {})
    src = str(gym / "ops" / name / "src")
    installed = bool(setting.get("installed"))
    path = [str(HOOK), str(ROOT), ""] if installed else [src, str(HOOK), str(ROOT)]
    site = ["--site-path", src] if installed else []
    cmd = [sys.executable, "-m", "runtime.emulator", "--quiet", *setting.get("flags", []), *site, *extra,
           *command.split()]
    return cmd, os.pathsep.join(path)


def run_group(cmd: list[str], *, cwd: Path, env: dict[str, str], timeout: float) -> tuple[str, int]:
    """Run ``cmd`` in its own process group: its output and exit status, or ``timeout`` and -1 when it ran out of
    time (or the bench is interrupted), after the whole group is killed. Why the group: py-spy stops the process
    it samples; on 4 Dec a ``--native`` profile of quant_batch_matmul hung, and killing py-spy alone would have
    left the emulator stopped for good - the bench waited 55 minutes on it."""
    with subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          start_new_session=True) as proc:
        try:
            out, _ = proc.communicate(timeout=timeout)
            return out, proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, SIGKILL)
            out, _ = proc.communicate()
            return (out or "") + "\ntimeout", -1
        except BaseException:  # Ctrl-C: the group is not in the terminal's foreground group, end it here
            os.killpg(proc.pid, SIGKILL)
            raise


def run_gym(gym: Path, name: str, folder: str, command: str, signal: str, *, profile: bool, timeout: float,
            extra: list[str]) -> dict[str, Any]:
    """One measured run of a gym operator; returns the records and the vendor's verdict."""
    with tempfile.TemporaryDirectory(prefix="emureal-") as tmp:
        out = Path(tmp) / "records.jsonl"
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PTO_FORGE_EMULATOR_CHILD")}
        cmd, path = gym_command(gym, name, command, extra)
        env.update(THREADS, TILE_FWK_DEVICE_ID="0", FORGE_EMUREAL_OUT=str(out),
                   FORGE_EMUREAL_GOLDEN=json.dumps(GOLDEN.get(name, [])), PYTHONPATH=path)
        raw = Path(tmp) / "pyspy.txt"
        spy = pyspy()
        if profile and spy:
            cmd = [spy, "record", "--native", "--subprocesses", "-r", "200", "-f", "raw", "-o", str(raw), "--", *cmd]
        t = time.perf_counter()
        text, rc = run_group(cmd, cwd=gym / "ops" / folder, env=env, timeout=timeout)
        wall = time.perf_counter() - t
        recs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()] if out.exists() else []
        if profile and raw.exists():
            recs.append({"type": "profile", "categories": pyspy_breakdown(raw)})
    kernels = [r for r in recs if r["type"] == "kernel"]
    passed = rc == 0 and bool(kernels) and (signal == "rc0" or re.search(signal, text) is not None)
    last = (text.strip().splitlines() or [""])[-1][:100]
    return {"op": name, "rc": rc, "passed": passed, "wall": wall, "records": recs, "last_line": last}


def _cpu(run: dict[str, Any], kind: str) -> float:
    return sum(r["cpu"] for r in run["records"] if r["type"] == kind)


def pick_run(runs: list[dict[str, Any]], stat: str = "median") -> dict[str, Any]:
    """One run out of repeated runs of a gym operator: the kernel records of the run with the median (``stat`` =
    "median") or least ("best") emulator CPU time, and the golden records of the run with the median / least golden
    CPU time - each is the same computation in every run, chosen apart. The median of fresh processes is the
    default: a small operator's time moves +-30% from one process to the next (first-use costs, which call the
    collector's older-generation collection lands in, page faults of fresh memory), and the best of N picks the
    luckiest process of each side. ``ratios`` keeps every run's own ratio (the spread the table shows). A run that
    failed is reported as it is."""
    if len(runs) == 1 or not all(r["passed"] for r in runs):
        return next((r for r in runs if not r["passed"]), runs[0])

    def chosen(kind: str) -> dict[str, Any]:
        ranked = sorted(runs, key=lambda r: _cpu(r, kind))
        return ranked[0] if stat == "best" else ranked[(len(ranked) - 1) // 2]

    emu, gold = chosen("kernel"), chosen("golden")
    recs = [r for r in emu["records"] if r["type"] != "golden"] + [r for r in gold["records"] if r["type"] == "golden"]
    ratios = [_cpu(r, "kernel") / _cpu(r, "golden") for r in runs if _cpu(r, "golden") > 0]
    return {**emu, "records": recs, "repeats": len(runs), "ratios": ratios}


def summarise(run: dict[str, Any], prof: dict[str, Any] | None) -> dict[str, Any]:
    recs = run["records"]
    kernels = [r for r in recs if r["type"] == "kernel"]
    golden = [r for r in recs if r["type"] == "golden"]
    procs = [r for r in recs if r["type"] == "process"]
    s: dict[str, Any] = {"op": run["op"], "passed": run["passed"], "rc": run["rc"], "last_line": run["last_line"],
                         "kernel_calls": len(kernels), "golden_calls": len(golden), "wall_s": run["wall"],
                         "repeats": run.get("repeats", 1), "run_ratios": run.get("ratios", [])}
    s["emu_cpu"] = sum(k["cpu"] for k in kernels)
    s["trace_cpu"] = sum(k.get("program_cpu", 0.0) - k.get("lower_cpu", 0.0) for k in kernels)
    s["lower_cpu"] = sum(k.get("lower_cpu", 0.0) for k in kernels)
    s["exec_cpu"] = sum(k.get("exec_cpu", 0.0) for k in kernels)
    s["gc_cpu"] = sum(k.get("gc_cpu", 0.0) for k in kernels)
    s["golden_cpu"] = sum(g["cpu"] for g in golden)
    s["golden_gc_cpu"] = sum(g.get("gc_cpu", 0.0) for g in golden)
    s["ratio"] = s["emu_cpu"] / s["golden_cpu"] if s["golden_cpu"] > 0 and kernels else None
    bare = s["golden_cpu"] - s["golden_gc_cpu"]
    s["ratio_nogc"] = (s["emu_cpu"] - s["gc_cpu"]) / bare if bare > 0 and kernels else None
    """the ratio without the collector's time on either side: where a collection lands is a lottery over the
    whole process's allocations (see the hook's ``_gc_callback``), +-2-4 ms on the small operators"""
    s["maxrss_mb"] = max((p["maxrss_kb"] for p in procs), default=0) / 1024
    worst = None
    for k in kernels:
        args = k.get("args_bytes") or 0
        if not args or not k.get("hwm_kb"):
            continue
        extra = max(0, k["hwm_kb"] - k["rss_before_kb"]) * 1024
        r = (args + extra) / args
        if worst is None or args > worst[1] or (args == worst[1] and r > worst[0]):
            worst = (r, args)  # the largest call (by its own tensors) is the one the target is about
    s["peak_ratio"], s["args_mb"] = (worst[0], worst[1] / 2**20) if worst else (None, 0.0)
    s["peak_ratio_max"] = max(((k["hwm_kb"] - k["rss_before_kb"]) * 1024 + k["args_bytes"]) / k["args_bytes"]
                              for k in kernels if k.get("args_bytes") and k.get("hwm_kb")) if worst else None
    if prof is not None:
        cats: dict[str, float] = {}
        for r in prof["records"]:
            if r["type"] == "profile":
                for c, v in r["categories"].items():
                    cats[c] = cats.get(c, 0.0) + v
        tot = sum(v for c, v in cats.items() if c not in ("tracing", "lowering")) or 1.0
        s["breakdown"] = {c: cats.get(c, 0.0) / tot for c in CATS}
    return s


# ---- workspace ------------------------------------------------------------------------------------------

def workspace_ops() -> list[str]:
    return sorted(p.parents[2].name for p in (ROOT / "workspace").glob("*/traces/default/manifest.json"))


def run_workspace(op: str, repeat: int) -> dict[str, Any]:
    """Replay the op's trace into a scratch copy, then time wrapper vs golden on every SPEC case (best of N)."""
    import importlib.util

    import numpy as np

    import runtime.emulator as emu
    from orchestrator import api
    from runtime.opdir import load_op_dir
    from runtime.verify._calling import call_wrapper, imports_torch

    with tempfile.TemporaryDirectory(prefix="emureal-ws-") as tmp:
        scratch = api.copy_op_inputs(ROOT / "workspace" / op, Path(tmp) / op)
        try:
            result = api.run(scratch)
        except Exception as exc:  # noqa: BLE001 - one op that cannot be replayed must not stop the table
            return {"op": op, "passed": False, "last_line": f"replay failed: {str(exc)[:90]}"}
        if result.status != "delivered":
            return {"op": op, "passed": False, "last_line": f"replay ended {result.status}"}
        impl = next(scratch.glob("*_impl.py"))
        emu.install()
        o = load_op_dir(scratch)
        name = o.spec.op_name
        sys.path.insert(0, str(impl.parent))
        try:
            spec = importlib.util.spec_from_file_location(f"emureal_{op}", impl)
            assert spec is not None and spec.loader is not None
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            gspec = importlib.util.spec_from_file_location(f"emureal_golden_{op}", scratch / "golden.py")
            assert gspec is not None and gspec.loader is not None
            gmod = importlib.util.module_from_spec(gspec)
            gspec.loader.exec_module(gmod)
        finally:
            sys.path.remove(str(impl.parent))
        import inspect

        wrapper = getattr(mod, f"{name}_wrapper", None) or getattr(mod, name)
        kw = {k: v for k, v in o.spec.attrs.items() if k in inspect.signature(wrapper).parameters}
        gkw = {k: v for k, v in o.spec.attrs.items() if k in inspect.signature(gmod.golden).parameters}
        torch_io = imports_torch(impl.read_text(encoding="utf-8"))
        cases = o.cases()
        inputs_of = [[np.asarray(a) for a in o.make_inputs(case)] for case in cases]
        args_mb = max(sum(a.nbytes for a in inputs) / 2**20 for inputs in inputs_of)

        def emu_pass() -> list[float]:
            out = []
            for inputs in inputs_of:
                t = time.process_time()
                with emu.session():
                    call_wrapper(wrapper, [a.copy() for a in inputs], {"kwargs": kw, "torch": torch_io})
                out.append(time.process_time() - t)
            return out

        # cold: the first call of each case in this process (what one verification pays: nothing cached but
        # what earlier cases of the same signature left); warm: best of the next N (the trace cache's steady state)
        cold = emu_pass()
        warm = [float("inf")] * len(cases)
        gold = [float("inf")] * len(cases)
        for _ in range(repeat):
            warm = [min(a, b) for a, b in zip(warm, emu_pass(), strict=True)]
            for i, inputs in enumerate(inputs_of):
                copies = [a.copy() for a in inputs]
                t = time.process_time()
                gmod.golden(*copies, **gkw)
                gold[i] = min(gold[i], time.process_time() - t)
        emu_t, cold_t, gold_t = sum(warm), sum(cold), sum(gold)
    return {"op": op, "passed": True, "cases": len(cases), "emu_cpu": emu_t, "golden_cpu": gold_t,
            "ratio": emu_t / gold_t if gold_t else None, "cold_cpu": cold_t,
            "cold_ratio": cold_t / gold_t if gold_t else None, "args_mb": args_mb, "last_line": ""}


# ---- report ---------------------------------------------------------------------------------------------

def _f(x: float | None, fmt: str = ".2f") -> str:
    return "-" if x is None else format(x, fmt)


def _ms(v: float | None) -> str:
    return _f(None if v is None else 1e3 * v, ".1f")


def _spread(s: dict[str, Any]) -> str:
    """The least and largest ratio of the repeated runs (each run's emulator time over its own golden time)."""
    r = s.get("run_ratios") or []
    return f"{min(r):.1f}-{max(r):.1f}" if len(r) > 1 else "-"


def print_gym(rows: list[dict[str, Any]]) -> None:
    print(f"{'gym operator':<27} {'vendor':>6} {'calls':>5} {'emu ms':>7} {'golden ms':>9} {'x':>6} "
          f"{'x -gc':>6} {'trace':>6} {'lower':>5} {'exec':>6} {'other':>5} {'gc':>5} {'g gc':>5} {'interp':>6} {'numpy':>6} {'copy':>6} "
          f"{'dtype':>6} {'checks':>6} {'peak/args':>9} {'args MB':>8} {'rss MB':>7} {'x per run':>11}")
    for s in rows:
        b = s.get("breakdown") or {}
        other = s["emu_cpu"] - s["trace_cpu"] - s["lower_cpu"] - s["exec_cpu"]
        print(f"{s['op']:<27} {'PASS' if s['passed'] else 'fail':>6} {s['kernel_calls']:>5} "
              f"{_ms(s['emu_cpu']):>7} {_ms(s['golden_cpu']):>9} {_f(s['ratio'], '.1f'):>6} "
              f"{_f(s.get('ratio_nogc'), '.1f'):>6} "
              f"{_ms(s['trace_cpu']):>6} {_ms(s['lower_cpu']):>5} {_ms(s['exec_cpu']):>6} {_ms(other):>5} "
              f"{_ms(s.get('gc_cpu')):>5} {_ms(s.get('golden_gc_cpu')):>5} "
              + " ".join(f"{_f(100 * b[c] if c in b else None, '.0f') + '%':>6}" for c in CATS)
              + f" {_f(s['peak_ratio'], '.2f'):>9} {s['args_mb']:>8.1f} {s['maxrss_mb']:>7.0f} {_spread(s):>11}")
        if not s["passed"]:
            print(f"{'':<27} -> rc {s['rc']}: {s['last_line']}")
    ok = [s for s in rows if s["passed"] and s["ratio"] is not None]
    _medians(ok, "gym")
    _medians([{**s, "ratio": s["ratio_nogc"]} for s in ok if s.get("ratio_nogc") is not None],
             "gym without the collector's time (both sides)")


def print_ws(rows: list[dict[str, Any]]) -> None:
    print(f"\n{'workspace op':<22} {'cases':>5} {'cold s':>7} {'x':>7} {'warm s':>7} {'x':>7} {'golden s':>8} "
          f"{'args MB':>8}")
    for s in rows:
        if not s["passed"]:
            print(f"{s['op']:<22} not measured: {s['last_line']}")
            continue
        print(f"{s['op']:<22} {s['cases']:>5} {s['cold_cpu']:>7.3f} {_f(s['cold_ratio'], '.1f'):>7} "
              f"{s['emu_cpu']:>7.3f} {_f(s['ratio'], '.1f'):>7} {s['golden_cpu']:>8.4f} {s['args_mb']:>8.2f}")
    ok = [s for s in rows if s["passed"] and s.get("ratio") is not None]
    _medians([{**s, "ratio": s["cold_ratio"]} for s in ok], "workspace cold (first call of each case)")
    _medians(ok, "workspace warm (best of the next N calls)")


def _medians(ok: list[dict[str, Any]], what: str) -> None:
    if ok:
        r = [s["ratio"] for s in ok]
        worst = max(ok, key=lambda s: s["ratio"])
        print(f"{what}: {len(ok)} measured, median emulator/golden {statistics.median(r):.1f}x, worst "
              f"{worst['ratio']:.1f}x ({worst['op']})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ops", nargs="*", help="only these operators (gym or workspace names)")
    ap.add_argument("--no-gym", action="store_true")
    ap.add_argument("--no-workspace", action="store_true")
    ap.add_argument("--no-profile", action="store_true",
                    help="skip the second run under py-spy (the breakdown; needs `pip install py-spy`)")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--repeat", type=int, default=3, help="workspace: warm = best of N calls per case after the first")
    ap.add_argument("--gym-repeat", type=int, default=1,
                    help="gym: run each operator N times in fresh processes (see --gym-stat)")
    ap.add_argument("--gym-stat", choices=("median", "best"), default="median",
                    help="with --gym-repeat: emulator and golden time are each the median (default) or the best "
                         "of the N runs")
    ap.add_argument("--emulator-arg", action="append", default=[],
                    help="extra option for python -m runtime.emulator (e.g. --emulator-arg=--compat=head)")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    a = ap.parse_args()
    for k, v in THREADS.items():
        os.environ.setdefault(k, v)
    out: dict[str, Any] = {"load": os.getloadavg()[0], "cpus": os.cpu_count()}
    gym = shared() / "gym"
    if not a.no_gym:
        if not (gym / "runs.tsv").is_file():
            print(f"emulator_real: no gym corpus at {gym} (set FORGE_SHARED); gym part skipped")
        else:
            rows = []
            for name, folder, command, signal in gym_rows(gym):
                if a.ops and name not in a.ops:
                    continue
                runs = [run_gym(gym, name, folder, command, signal, profile=False, timeout=a.timeout,
                                extra=a.emulator_arg) for _ in range(max(1, a.gym_repeat))]
                run = pick_run(runs, a.gym_stat)
                prof = None
                if not a.no_profile and run["passed"] and pyspy():
                    # a profiled run takes a few times the plain one; one that hangs loses the breakdown only
                    prof = run_gym(gym, name, folder, command, signal, profile=True,
                                   timeout=min(a.timeout, PROFILE_GRACE_S + PROFILE_FACTOR * run["wall"]),
                                   extra=a.emulator_arg)
                    if prof["rc"] == -1:
                        print(f"  {name}: the profiled run timed out (breakdown left empty)", file=sys.stderr)
                        prof = None
                rows.append(summarise(run, prof))
                print(f"  measured {name}: {'PASS' if run['passed'] else 'fail'} in {run['wall']:.0f} s",
                      file=sys.stderr, flush=True)
            out["gym"] = rows
            print_gym(rows)
    if not a.no_workspace:
        for var in ("FORGE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
            os.environ.pop(var, None)
        ws = [run_workspace(op, a.repeat) for op in workspace_ops() if not a.ops or op in a.ops]
        out["workspace"] = ws
        print_ws(ws)
    print(f"(CPU time, 1 BLAS thread; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    if os.environ.get("FORGE_EMUREAL_CAPTURE"):
        # the capture hook writes every kernel call's arguments inside the timed call (rms_norm read 7.4x, not 2.2x)
        print("NOTE: FORGE_EMUREAL_CAPTURE is set: the emulator times include writing the captures; the ratios above "
              "are not speed measurements (capture and measure in separate runs)")
        out["capture_inflated"] = True
    if a.json:
        a.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
