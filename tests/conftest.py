"""Suite-wide fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

_TOOLCHAIN_TESTS = Path(__file__).with_name("toolchain")


@pytest.fixture(autouse=True)
def _no_implicit_local_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run with no model configured never falls back to the embedded local model in tests (installing the
    '.[local]' extra would otherwise turn every "no model configured" case into a live llama.cpp run); tests of
    the fallback itself delete the variable, and ``--model local`` is unaffected."""
    monkeypatch.setenv("PTO_FORGE_LOCAL_MODEL", "off")


@pytest.fixture(autouse=True)
def _no_implicit_real_toolchain(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside tests/toolchain the real pypto toolchain is never picked up implicitly (installing the
    '.[toolchain]' extra or setting PTO_FORGE_PYPTO_PYTHON would otherwise compile every delivered kernel of
    every scripted run with it). Recorded toolchain answers in traces are still replayed."""
    if _TOOLCHAIN_TESTS not in Path(str(request.node.path)).parents:
        monkeypatch.setenv("PTO_FORGE_TOOLCHAIN", "off")


@pytest.fixture(autouse=True)
def _deterministic_unseen_seed(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """``runtime.verify`` without ``unseen_seed`` draws a fresh random seed per run (production); tests stay
    deterministic: the seed a test gets is a function of its node id. A test that wants a fresh draw calls
    ``runtime.opdir._unseen._fresh_seed``."""
    import zlib

    from runtime.opdir import _unseen

    seed = zlib.crc32(request.node.nodeid.encode())
    monkeypatch.setattr(_unseen, "draw_seed", lambda: seed)


# ------------------------------------------------------------------------------------------------ test tiers
# `make test` runs the fast tier (`-m "not slow"`), `make test-all` everything (pre-release; CI runs `make test`). A test that costs
# more than SLOW_CPU_S seconds of CPU (this process and the children it waited for: golden runs, sandboxes,
# CLI processes) belongs in the slow tier: CPU time, not wall time, so the measure holds on a busy machine.
# The summary names every unmarked test over the line, so the fast tier stays fast as tests are added.

SLOW_CPU_S = 3.0
SLOW_WALL_S = 8.0
"""wall seconds over which an unmarked test is named even with little CPU of its own: the CPU line counts only the
children a test waited for, and a sandbox's device process or a golden server is not one of them (session 21: bisect
tests imported torch in every sandbox, ~2.5 s a run, and none of it showed as the test's CPU)"""
_cpu: dict[str, tuple[float, float, bool]] = {}


def _cpu_now() -> float:
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


_SETUP = pytest.StashKey[tuple[float, float]]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    import time

    cpu, wall = _cpu_now(), time.perf_counter()
    yield
    item.stash[_SETUP] = (_cpu_now() - cpu, time.perf_counter() - wall)  # fixtures (a shared one: its first user)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    import time

    cpu, wall = _cpu_now(), time.perf_counter()
    yield
    setup_cpu, setup_wall = item.stash.get(_SETUP, (0.0, 0.0))
    item.user_properties.append(("cpu_s", round(_cpu_now() - cpu + setup_cpu, 3)))
    item.user_properties.append(("wall_s", round(time.perf_counter() - wall + setup_wall, 3)))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        props = dict(report.user_properties)
        if "cpu_s" in props:
            planned = "slow" in report.keywords or "heavy_in_ci" in report.keywords  # not named as misplaced
            _cpu[report.nodeid] = (float(props["cpu_s"]), float(props["wall_s"]), planned)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:  # noqa: ARG001
    if not _cpu:
        return
    total = sum(c for c, _, _ in _cpu.values())
    fast = sum(c for c, _, slow in _cpu.values() if not slow)
    unmarked = sorted(((c, n) for n, (c, _, slow) in _cpu.items() if not slow and c > SLOW_CPU_S), reverse=True)
    tr = terminalreporter
    tr.write_line(f"test CPU: {total:.0f} s in {len(_cpu)} tests ({fast:.0f} s outside the slow tier)")
    if unmarked:
        tr.write_line(f"{len(unmarked)} test(s) without @pytest.mark.slow took more than {SLOW_CPU_S:g} s of CPU:")
        for c, n in unmarked[:15]:
            tr.write_line(f"  {c:6.1f} s  {n}")
    hidden = sorted(((w, n) for n, (c, w, slow) in _cpu.items() if not slow and c <= SLOW_CPU_S and w > SLOW_WALL_S),
                    reverse=True)
    if hidden:
        tr.write_line(f"{len(hidden)} test(s) without @pytest.mark.slow took more than {SLOW_WALL_S:g} s of wall time "
                      "on little CPU of their own (work in processes they did not wait for, or a loaded machine):")
        for w, n in hidden[:15]:
            tr.write_line(f"  {w:6.1f} s  {n}")
    if config.getoption("--cpu-report", default=False):
        tr.write_line("CPU seconds per test (slow-tier tests marked *):")
        for n, (c, w, slow) in sorted(_cpu.items(), key=lambda kv: -kv[1][0]):
            tr.write_line(f"  {c:7.2f} s cpu {w:7.2f} s wall {'*' if slow else ' '} {n}")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-report", action="store_true", help="list every test's CPU and wall seconds")
