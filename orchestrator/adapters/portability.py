"""Does a trace replay on another machine? Replay it here as other machines would compute, and compare bytes.

A recorded run must replay byte-identically wherever float32 results differ in their last bits and whatever
isolation the sandbox gets (ARCHITECTURE §0.2). This module replays a trace into scratch copies of the op dir
under the test modes of :mod:`runtime.testmodes` - seeded ulp noise on every float result (emulator ops, golden
numpy calls and outputs, candidate outputs), the sandbox's no-user-namespace path, and a subprocess with a
different ``OPENBLAS_CORETYPE`` - and requires every delivered artifact to equal the plain result byte for byte.

``python -m orchestrator author`` runs :func:`check_trace` before it ships a trace; the tests in
``tests/e2e/test_replay_portability.py`` run it on every shipped trace. Standalone (e.g. on another machine)::

    python -m orchestrator.adapters.portability workspace/sdpa            # plain replay vs. the manifest's artifacts
    python -m orchestrator.adapters.portability workspace/sdpa --noise    # plus the noise variants
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.errors import ForgeError

__all__ = ["DEFAULT_VARIANTS", "PortabilityReport", "Variant", "artifact_digests", "check_trace", "replay_digests"]

ARTIFACTS = ("DESIGN.md", "module_interfaces.yaml", "MEMORY.md", "README.md")
"""Delivered files (plus ``<op>_impl.py`` and ``modules/*.py``) that must not depend on the machine."""


@dataclass(frozen=True)
class Variant:
    """One simulated machine: ulp-noise seed, sandbox without user namespaces, BLAS core type in a subprocess."""

    name: str
    seed: int | None = None
    no_userns: bool = False
    coretype: str | None = None
    """When set, the replay runs in a subprocess with this ``OPENBLAS_CORETYPE`` (read at BLAS load time)."""


DEFAULT_VARIANTS = (
    Variant("ulp noise seed 1, sandbox without user namespaces", seed=1, no_userns=True),
    Variant("ulp noise seed 2", seed=2),
    Variant("ulp noise seed 3, OPENBLAS_CORETYPE=Sandybridge (subprocess)", seed=3, coretype="Sandybridge"),
)


@dataclass
class VariantResult:
    variant: Variant
    ok: bool
    problem: str = ""
    seconds: float = 0.0


@dataclass
class PortabilityReport:
    """The outcome per variant; ``ok`` when every variant delivered the expected bytes."""

    trace: Path
    expected: dict[str, str]
    results: list[VariantResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    def lines(self) -> list[str]:
        return [f"{'ok  ' if r.ok else 'FAIL'} {r.variant.name} ({r.seconds:.0f} s)"
                + (f": {r.problem}" if r.problem else "") for r in self.results]


def artifact_digests(op_dir: Path) -> dict[str, str]:
    """sha256 of every delivered artifact of a run in ``op_dir`` (relative path -> hex digest)."""
    from orchestrator.core import opdir_bridge
    op_name = opdir_bridge.load(op_dir).op_name
    files = [op_dir / n for n in (*ARTIFACTS, f"{op_name}_impl.py")] + sorted((op_dir / "modules").glob("*.py"))
    return {str(p.relative_to(op_dir)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files if p.is_file()}


def replay_digests(op_dir: Path, trace: Path, work: Path, *, seed: int | None = None,
                   no_userns: bool = False) -> dict[str, str]:
    """Replay ``trace`` into a scratch copy (``work``) of ``op_dir`` in this process; artifact digests.

    Raises:
        ForgeError: the replay did not deliver (the message names the miss or the stop).
    """
    from agents.trace import ReplayMissError
    from orchestrator import api
    from runtime.testmodes import ulp_noise

    copy = api.copy_op_inputs(op_dir, work, traces=False)
    with ulp_noise(seed, without_userns=no_userns):
        try:
            result = api.replay(copy, trace, api.RunOptions(run_id="portability"))
        except ReplayMissError as exc:
            raise ForgeError(f"replay miss: {str(exc).splitlines()[0]}\n{exc}") from None
    if result.status != "delivered" or result.divergences:
        raise ForgeError(f"replay ended {result.status!r} at {result.node!r}"
                         + (f"; divergences: {result.divergences}" if result.divergences else ""))
    return artifact_digests(copy)


def _subprocess_digests(op_dir: Path, trace: Path, work: Path, variant: Variant) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PTO_FORGE_TEST_ULP_NOISE", None)
    if variant.coretype:
        env["OPENBLAS_CORETYPE"] = variant.coretype
    cmd = [sys.executable, "-m", "orchestrator.adapters.portability", str(op_dir), "--trace", str(trace), "--replay-once",
           str(work)] + (["--seed", str(variant.seed)] if variant.seed is not None else []) \
        + (["--no-userns"] if variant.no_userns else [])
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800, check=False)
    if proc.returncode != 0:
        raise ForgeError((proc.stdout + proc.stderr).strip()[-4000:] or f"exit code {proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _compare(expected: dict[str, str], got: dict[str, str]) -> str:
    differ = sorted(k for k in set(expected) | set(got) if expected.get(k) != got.get(k))
    return f"artifacts differ from the plain replay: {', '.join(differ)}" if differ else ""


def check_trace(op_dir: Path | str, trace: Path | str | None = None, *, expected: dict[str, str] | None = None,
                variants: tuple[Variant, ...] = DEFAULT_VARIANTS, on_result=None) -> PortabilityReport:
    """Replay ``trace`` (default ``<op_dir>/traces/default``) under every variant; compare artifact bytes.

    Args:
        op_dir: the operator directory (SPEC.md + golden.py are copied; nothing is written there).
        trace: the recorded trace directory.
        expected: artifact digests of the plain run; default: the manifest's ``artifacts``, else a plain replay.
        variants: the simulated machines.
        on_result: called with each :class:`VariantResult` as it finishes (progress output).
    """
    root = Path(op_dir).resolve()
    src = Path(trace).resolve() if trace else root / "traces" / "default"
    if expected is None:
        manifest = json.loads((src / "manifest.json").read_text(encoding="utf-8"))
        expected = manifest.get("artifacts") or None
    report = PortabilityReport(trace=src, expected=expected or {})
    with tempfile.TemporaryDirectory(prefix="forge-portability-") as tmp:
        if not report.expected:
            t0 = time.monotonic()
            report.expected = replay_digests(root, src, Path(tmp) / "plain")
            res = VariantResult(Variant("plain replay"), True, seconds=time.monotonic() - t0)
            report.results.append(res)
            if on_result:
                on_result(res)
        for i, v in enumerate(variants):
            t0 = time.monotonic()
            work = Path(tmp) / f"v{i}" / root.name
            work.parent.mkdir()
            try:
                got = _subprocess_digests(root, src, work, v) if v.coretype else \
                    replay_digests(root, src, work, seed=v.seed, no_userns=v.no_userns)
                problem = _compare(report.expected, got)
            except ForgeError as exc:
                problem = exc.message if hasattr(exc, "message") else str(exc)
            res = VariantResult(v, not problem, problem, time.monotonic() - t0)
            report.results.append(res)
            if on_result:
                on_result(res)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m orchestrator.adapters.portability",
                                     description="Check that a trace replays byte-identically on other machines.")
    parser.add_argument("op_dir")
    parser.add_argument("--trace", default=None, help="trace directory (default <op_dir>/traces/default)")
    parser.add_argument("--noise", action="store_true", help="also replay under the simulated-machine variants")
    parser.add_argument("--replay-once", metavar="WORK", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--no-userns", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    root = Path(args.op_dir).resolve()
    trace = Path(args.trace).resolve() if args.trace else root / "traces" / "default"
    try:
        if args.replay_once:  # child of a subprocess variant: one replay, digests as the last stdout line
            digests = replay_digests(root, trace, Path(args.replay_once), seed=args.seed, no_userns=args.no_userns)
            sys.stdout.write(json.dumps(digests, sort_keys=True) + "\n")
            return 0
        report = check_trace(root, trace, variants=DEFAULT_VARIANTS if args.noise else (Variant("plain replay"),),
                             on_result=lambda r: print(PortabilityReport(trace, {}, [r]).lines()[0], flush=True))
    except ForgeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("portable" if report.ok else "NOT portable: see the lines above")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
