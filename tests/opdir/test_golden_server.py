"""One golden process per run (runtime.opdir.golden_server): a fork of it does what a fresh golden child does.

Every test of test_opdir_golden.py runs again here with a server active (outputs, intermediates, every failure
mode: syntax, import, exception line, timeouts, bad outputs, make_inputs), plus what only a fork could get wrong:
state left by one golden run visible to the next, the environment and directory, random seeds, a crash's
stderr, the server dying, a golden over its budget, and two threads at once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import test_opdir_golden
from opdir_helpers import BASE_GOLDEN, write_op
from test_opdir_golden import *  # noqa: F403 - the same tests, run again under the autouse server below

from runtime.opdir import GoldenError, GoldenServer, golden_server, load_op_dir, run_golden, run_golden_cases
from runtime.opdir._golden_server import active_server

assert test_opdir_golden  # the module whose tests are re-collected here


@pytest.fixture(autouse=True)
def server() -> Iterator[GoldenServer]:
    with golden_server() as srv:
        yield srv
    assert active_server() is None


def _run(tmp_path: Path, golden: str, name: str = "op"):  # noqa: ANN202
    op = load_op_dir(write_op(tmp_path / name, golden=golden))
    return run_golden(op, op.cases()[0])


def test_golden_runs_are_forks_of_one_process(tmp_path: Path, server: GoldenServer) -> None:
    op = load_op_dir(write_op(tmp_path / "op", golden=BASE_GOLDEN))
    first = run_golden_cases(op, op.cases()[:2])
    second = run_golden_cases(op, op.cases()[:2])
    assert server.starts == 1 and server.forks == 2
    for name, run in first.items():
        assert run.outputs["y"].tobytes() == second[name].outputs["y"].tobytes()


def test_the_same_bits_as_a_fresh_process(tmp_path: Path) -> None:
    op = load_op_dir(write_op(tmp_path / "op", golden=BASE_GOLDEN))
    forked = run_golden_cases(op, op.cases())
    with golden_server():  # nested: the same server
        assert active_server() is not None
    import runtime.opdir._golden_server as gs

    saved = gs._ACTIVE
    gs._ACTIVE = None
    try:
        fresh = run_golden_cases(op, op.cases())
    finally:
        gs._ACTIVE = saved
    assert list(forked) == list(fresh)
    for name in fresh:
        for k in ("outputs", "intermediates"):
            a, b = getattr(forked[name], k), getattr(fresh[name], k)
            assert list(a) == list(b) and all(a[n].tobytes() == b[n].tobytes() for n in a)


def test_nothing_of_one_golden_run_reaches_the_next(tmp_path: Path) -> None:
    leaky = BASE_GOLDEN.replace("import numpy as np\n", "import numpy as np\nimport sys\nsys.LEAK = 1\n"
                                "np.LEAK = 1\n")
    _run(tmp_path, leaky, "a")
    probe = BASE_GOLDEN.replace("    return y.astype(x.dtype)",
                                "    import sys\n    assert not hasattr(sys, 'LEAK') and not hasattr(np, 'LEAK'), "
                                "'leak'\n    assert 'golden' not in sys.modules or sys.modules['golden'].__file__ "
                                "== __file__\n    return y.astype(x.dtype)")
    _run(tmp_path, probe, "b")  # raises GoldenError on a leak


def test_environment_directory_and_argv_are_a_fresh_childs(tmp_path: Path) -> None:
    probe = BASE_GOLDEN.replace("    return y.astype(x.dtype)", (
        "    import os, sys, tempfile\n"
        "    cwd = os.getcwd()\n"
        "    assert os.environ['HOME'] == cwd and os.environ['TMPDIR'] == cwd, dict(os.environ)\n"
        "    assert tempfile.gettempdir() == cwd\n"
        "    assert 'OPENAI_API_KEY' not in os.environ and 'FORGE_SECRET_PROBE' not in os.environ\n"
        "    assert len(sys.argv) == 2 and sys.argv[1] == cwd, sys.argv\n"
        "    assert 'forge-golden-server' not in cwd\n"
        "    return y.astype(x.dtype)"))
    import os

    os.environ["FORGE_SECRET_PROBE"] = "x"
    try:
        _run(tmp_path, probe)
    finally:
        del os.environ["FORGE_SECRET_PROBE"]


def test_a_server_started_before_the_environment_changed_is_replaced(tmp_path: Path, server: GoldenServer,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A fork has its server's environment, and numpy reads BLAS variables at import: a server kept across a
    change of the parent's environment gave golden.py another environment than a fresh child (and the candidate)
    gets - CI caught it in tests/verify/test_env_policy.py when a server outlived the run that started it."""
    probe = BASE_GOLDEN.replace("    return y.astype(x.dtype)", (
        "    import os\n"
        "    assert os.environ.get('MKL_CBWR') == 'AUTO', dict(os.environ)\n"
        "    return y.astype(x.dtype)"))
    _run(tmp_path, BASE_GOLDEN, "before")
    monkeypatch.setenv("MKL_CBWR", "AUTO")  # a numerics variable passed through (OPENBLAS_CORETYPE is pinned)
    _run(tmp_path, probe, "after")  # GoldenError if the fork kept the old environment
    assert server.starts == 2
    _run(tmp_path, probe, "again")  # the same environment: the same server
    assert server.starts == 2


def test_unseeded_randomness_differs_between_runs_as_in_fresh_processes(tmp_path: Path) -> None:
    noisy = BASE_GOLDEN.replace("    return y.astype(x.dtype)",
                                "    import random\n    return (y + np.random.rand() + random.random()).astype(x.dtype)")
    a = _run(tmp_path, noisy, "a").outputs["y"]
    b = _run(tmp_path, noisy, "b").outputs["y"]
    assert a.tobytes() != b.tobytes()


def test_a_golden_that_kills_itself_is_a_crash_with_its_stderr(tmp_path: Path, server: GoldenServer) -> None:
    dying = BASE_GOLDEN.replace("    return y.astype(x.dtype)",
                                "    import os, sys\n    print('last words', file=sys.stderr, flush=True)\n"
                                "    os._exit(3)")
    with pytest.raises(GoldenError) as info:
        _run(tmp_path, dying)
    assert info.value.kind == "crash"
    assert "exit code 3" in str(info.value) and "last words" in str(info.value)
    _run(tmp_path, BASE_GOLDEN, "after")  # the server is unharmed
    assert server.starts == 1


def test_a_golden_over_its_budget_kills_the_server_and_the_next_run_starts_another(
        tmp_path: Path, server: GoldenServer, monkeypatch: pytest.MonkeyPatch) -> None:
    import runtime.opdir._golden_runner as runner

    monkeypatch.setattr(runner, "_STARTUP_S", 0.5)
    stuck = BASE_GOLDEN.replace("    y = scaled + b\n", "    import signal\n    signal.signal(signal.SIGALRM, "
                                "signal.SIG_IGN)\n    import time\n    time.sleep(30)\n    y = scaled + b\n")
    op = load_op_dir(write_op(tmp_path / "op", golden=stuck))
    with pytest.raises(GoldenError) as info:
        run_golden(op, op.cases()[0], timeout=1.0)
    assert info.value.kind == "timeout" and "no case could be stopped on its own" in str(info.value)
    monkeypatch.undo()
    _run(tmp_path, BASE_GOLDEN, "after")
    assert server.starts == 2


def test_a_server_killed_from_outside_is_replaced(tmp_path: Path, server: GoldenServer) -> None:
    import os
    import signal

    _run(tmp_path, BASE_GOLDEN, "a")
    assert server._proc is not None
    os.kill(server._proc.pid, signal.SIGKILL)
    server._proc.proc.wait()
    out = _run(tmp_path, BASE_GOLDEN, "b").outputs["y"]
    assert out.shape == (16, 32) and server.starts == 2


def test_two_threads_at_once_both_get_their_run(tmp_path: Path, server: GoldenServer) -> None:
    slow = BASE_GOLDEN.replace("    y = scaled + b\n", "    import time\n    time.sleep(0.5)\n    y = scaled + b\n")
    op = load_op_dir(write_op(tmp_path / "op", golden=slow))
    results: dict[int, np.ndarray] = {}

    def job(i: int) -> None:
        results[i] = run_golden(op, op.cases()[i]).outputs["y"]

    threads = [threading.Thread(target=job, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [0, 1] and results[0].shape == (16, 32)
    assert server.forks >= 1  # the other one may have started its own process (the server was busy)


@pytest.mark.parametrize("command", ["run", "replay"])
def test_the_cli_starts_the_runs_golden_process_before_the_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               command: str) -> None:
    """``python -m orchestrator run|replay`` boots the golden process before it imports orchestrator.api (LangGraph
    takes seconds): the api call finds it already started, and it is the one its intake uses."""
    import orchestrator.api as api
    from orchestrator.cli.main import main
    from orchestrator.errors import ForgeError

    seen: list[tuple[GoldenServer | None, int]] = []

    def fake(*_a: object, **_k: object) -> None:
        srv = active_server()
        seen.append((srv, srv.starts if srv is not None else 0))
        raise ForgeError("stopped by the test")

    monkeypatch.setattr(api, command, fake)
    outer = active_server()  # the autouse fixture's, which the command's block nests in: leave it aside
    import runtime.opdir._golden_server as gs

    monkeypatch.setattr(gs, "_ACTIVE", None)
    monkeypatch.setattr(gs, "_DEPTH", 0)
    op = write_op(tmp_path / "op", golden=BASE_GOLDEN)
    assert main([command, str(op), "--approve", "stop"] if command == "run" else [command, str(op)]) != 0
    assert len(seen) == 1 and seen[0][0] is not None and seen[0][0] is not outer and seen[0][1] == 1
    assert active_server() is None  # ended with the command
