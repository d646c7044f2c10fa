"""Import of a real pypto-gym operator (``src/`` + ``tests/`` layout): run its test once, observed, and map it.

The gym test is the only place that says how the operator is called (shapes, dtypes, attributes, config
objects, output buffers, tolerance), so the import runs it as its user does, on the emulator, through
``runtime.sandbox.run_process`` (vendor code: the allow-listed environment plus ``TILE_FWK_DEVICE_ID``, a
private copy of the operator folder as its working tree), with ``_observe`` recording the calls. The mapping
(``_observed``) turns the (entry, golden) pairs into the op dir.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from orchestrator.adapters.gym._layout import GymOp
from orchestrator.adapters.gym._observed import Mapping, MappingError, golden_source, map_observation
from runtime import pyast
from runtime.targets import DEFAULT_NPUARCH

__all__ = ["RealGymError", "import_real", "observe"]

_OBSERVER = Path(__file__).with_name("_observe.py")
_REPO = Path(__file__).resolve().parents[3]


class RealGymError(ValueError):
    """The gym operator cannot be imported (one line; nothing was written); how its test ended, when it ran."""

    def __init__(self, message: str, test_rc: int | None = None, test_output: str = "") -> None:
        super().__init__(message)
        self.test_rc, self.test_output = test_rc, test_output


def observe(gym: GymOp, timeout: float, flags: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Run the gym's test once under the emulator, observed; the event streams of every process, with file paths
    pointing into ``gym.root``."""
    from runtime.sandbox import Limits, isolation_level, private_dir, run_process

    with private_dir("forge-gym-") as work:
        copy = work / gym.root.name
        shutil.copytree(gym.root, copy, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "output"))
        for p in [copy, *copy.rglob("*")]:
            p.chmod(p.stat().st_mode | 0o200)
        events = work / ".observed"
        events.mkdir()
        request = {"root": str(copy.resolve()), "cwd": str(copy / gym.cwd.relative_to(gym.root)),
                   "argv": [*gym.command], "flags": [*flags, "--site-path", str(copy / "src")],
                   "observe_dir": str(events)}
        limits = Limits(wall_s=timeout, cpu_s=int(timeout) + 60, memory_bytes=None, max_open_files=4096,
                        max_file_bytes=None, max_processes=None)
        level, _why = isolation_level("auto")
        proc = run_process([sys.executable, "-s", "-B", str(_OBSERVER), "{channel_fd}"], work=work, limits=limits,
                           profile="vendor", isolation=level, stdin=json.dumps(request).encode(), channel=True,
                           channel_cap=256 << 20, output_cap=8 << 20, env_extra={"TILE_FWK_DEVICE_ID": "0"},
                           read_only=[str(_REPO)])
        if proc.timed_out:
            raise RealGymError(f"running the gym test ({gym.describe()}) took longer than {timeout:g} s")
        try:
            answer = json.loads(proc.channel.decode("utf-8"))
        except ValueError:
            tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["(no output)"]
            raise RealGymError(f"the gym test process died (exit code {proc.returncode}): {tail[0][:300]}") from None
        streams = [answer, *answer.get("children", [])]
        prefix = str(copy.resolve())
        for s in streams:  # paths of the private copy -> the operator folder itself
            for ev in s.get("events", []):
                if ev.get("file", "").startswith(prefix):
                    ev["file"] = str(gym.root) + ev["file"][len(prefix):]
        answer["stdout_tail"] = proc.stdout.decode("utf-8", "replace")[-6000:]
        answer["stderr_tail"] = proc.stderr.decode("utf-8", "replace")[-4000:]
        return streams


def _test_cases(gym: GymOp) -> dict[str, Any] | None:
    tests = gym.root / "tests"
    found = sorted({p.parent for p in tests.rglob("test_cases.json")}) if tests.is_dir() else []
    for folder in (gym.cwd, *found):
        path = folder / "test_cases.json"
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            return data if isinstance(data, dict) else None
    return None


def _vendor_imports(path: Path, root: Path) -> list[str]:
    """Imports of ``path`` that resolve to other modules of the operator (the op dir holds one kernel file)."""
    try:
        tree = pyast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return []
    src = root / "src"
    mods = {p.relative_to(src).with_suffix("").as_posix().replace("/", ".") for p in src.rglob("*.py")}
    stems = {m.split(".")[-1] for m in mods}
    out = []
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        for n in names:
            if n and (n in mods or n.split(".")[-1] in stems and n.split(".")[0] not in ("torch", "pypto")):
                out.append(f"{path.name}:{node.lineno}: imports {n}, another module of the gym operator; the op dir "
                           "holds one kernel file")
    return out


def _flag_value(flags: tuple[str, ...], name: str) -> str | None:
    """The value of ``name`` among runner flags (``--npuarch DAV_3510`` or ``--npuarch=DAV_3510``), the last wins."""
    got = None
    for i, f in enumerate(flags):
        if f == name and i + 1 < len(flags):
            got = flags[i + 1]
        elif f.startswith(name + "="):
            got = f.split("=", 1)[1]
    return got


def import_real(gym: GymOp, timeout: float, flags: tuple[str, ...] = ()
                ) -> tuple[Mapping, dict[str, str], list[str], tuple[int | None, str]]:
    """(the mapping, {file name: text} to write, extra unmapped lines, (the test's exit status, output tail))."""
    streams = observe(gym, timeout, flags)
    main = streams[0]
    run = (main.get("rc"), main.get("stdout_tail", "") + main.get("stderr_tail", ""))
    try:
        mapping = map_observation(gym.name, streams, _test_cases(gym))
    except MappingError as exc:
        tail = [ln for ln in main.get("stderr_tail", "").splitlines() if ln.startswith("ERROR")][-1:]
        why = f" (the test ended with rc {main.get('rc')}{': ' + tail[0][:200] if tail else ''})"
        raise RealGymError(f"{gym.root.name}: {exc}{why}", *run) from None
    extra: list[str] = []
    if main.get("rc") not in (0, None):
        extra.append(f"the gym test itself ended with exit status {main.get('rc')} under the emulator (see "
                     "docs/emulator-fidelity.md, gym operators)")
    g_src, skipped, copied = golden_source(mapping.golden_file, mapping.golden_fn, mapping.golden_in_test,
                                           gym.root / "src")
    extra += skipped
    mapping.notes += copied
    try:
        g_tree = pyast.parse(g_src)
        if any(isinstance(n, ast.Import | ast.ImportFrom) and any(
                (a.name if isinstance(n, ast.Import) else (n.module or "")).split(".")[0] == "pypto"
                for a in (n.names if isinstance(n, ast.Import) else [n])) for n in ast.walk(g_tree)):
            extra.append(f"{mapping.golden_file.name}: the gym golden imports pypto (a golden must not depend on the "
                         "kernel API, OL15)")
    except SyntaxError:
        pass
    impl_src = mapping.entry_file.read_text(encoding="utf-8")
    extra += _vendor_imports(mapping.entry_file, gym.root)
    spec = dict(mapping.spec)
    spec["imported"] = {"source": f"{gym.root.name}: {gym.describe()}", "tuned": True}
    if not spec.get("dynamic_axes"):
        mapping.notes.append("no dim differs between the observed cases, so SPEC.md has no dynamic axis and "
                             "verification runs no unseen sizes (tails, a power of two, 3-4x the SPEC): import the "
                             "test with several cases of different sizes (docs/gym.md)")
    if _picks_among_ties(g_src, spec):
        spec["ties"] = "unspecified"
        mapping.notes.append("SPEC.md declares `ties: unspecified`: the golden returns indices chosen by a top-k, sort "
                             "or argmax whose tie-break nothing fixes: verification draws no tied inputs, and an id may "
                             "differ where the value it picks agrees (docs/opdir.md)")
    arch = _flag_value(flags, "--npuarch")
    if arch is not None and arch != DEFAULT_NPUARCH:
        spec["npuarch"] = arch  # the device the test was run for (quant_batch_matmul's FP8 cube: the 950)
        mapping.notes.append(f"SPEC.md declares `npuarch: {arch}`: the gym test ran with --npuarch {arch}, and verify "
                             "runs the kernels on that architecture")
    files = {"golden.py": _golden_header(mapping) + g_src.rstrip() + "\n" + mapping.adapter,
             f"{gym.name}_impl.py": impl_src.rstrip() + "\n" + mapping.wrapper}
    mapping.spec = spec
    return mapping, files, extra, run


_PICKS = re.compile(r"\b(topk|argmax|argmin|argsort|sort|kthvalue|msort)\s*\(")


def _picks_among_ties(golden: str, spec: dict[str, Any]) -> bool:
    """The golden returns integer outputs (indices) and calls a function that picks among equal values: which of
    several tied experts a top-k returns is torch's choice there and the kernel's on the device (the gym's
    llada2_gate_select failed every verification on the tied rows verification draws; its own test compares ids as
    sets, on inputs without ties)."""
    outputs = spec.get("outputs") or []
    integer = any(str(o.get("dtype", "")).startswith(("int", "uint")) for o in outputs if isinstance(o, dict))
    return integer and _PICKS.search(golden) is not None


def _golden_header(m: Mapping) -> str:
    ins = ", ".join("[" + ",".join(str(d) for d in t["shape"]) + "]" for t in m.spec["inputs"])
    outs = ", ".join("[" + ",".join(str(d) for d in t["shape"]) + "]" for t in m.spec["outputs"])
    return ("# Golden function inventory\n"
            "# | # | Golden operation | Shape transformation |\n"
            "# |---|------------------|----------------------|\n"
            f"# | 1 | {m.golden_fn} (imported from the gym as one operation) | {ins} -> {outs} |\n"
            f"# Imported by `python -m orchestrator import` from {m.golden_file.name}: the gym golden below is "
            "unchanged;\n# golden() at the end feeds it torch tensors (PTO Forge hands golden() numpy arrays).\n\n")
