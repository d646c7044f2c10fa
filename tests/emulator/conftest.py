"""Fixtures of the emulator test directory.

Every test gets a fresh emulator session (so counters, diagnostics and option scopes never leak between
tests) and imports corpus modules afresh under a unique name (so module-level state such as trace
counters and jit caches starts empty). When the emulator cannot be installed the tests fail with one clear
message instead of being skipped: the corpus is the emulator's acceptance criterion.

The emulator is also installed (best effort) when this file is imported, so that test modules of this
directory may ``import pypto`` at module level.
"""

import importlib
import importlib.util
import itertools
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

CORPUS_DIR = Path(__file__).parent / "corpus"

if str(CORPUS_DIR) not in sys.path:
    sys.path.insert(0, str(CORPUS_DIR))

try:  # best effort: the fixtures below report a missing emulator as a clear failure
    importlib.import_module("runtime.emulator").install()
except Exception:  # noqa: BLE001 - collection must not crash while the emulator is being built
    pass

_counter = itertools.count()


def _installed_emulator() -> ModuleType:
    try:
        emu = importlib.import_module("runtime.emulator")
    except Exception as exc:  # the emulator is developed in parallel; report, do not skip
        pytest.fail(f"runtime.emulator is not importable: {type(exc).__name__}: {exc}", pytrace=False)
    for name in ("install", "session", "EmulatorError"):
        if not hasattr(emu, name):
            pytest.fail(f"runtime.emulator has no `{name}` yet (docs/INTERFACES.md)", pytrace=False)
    emu.install()
    return emu


@pytest.fixture
def emu() -> ModuleType:
    """`runtime.emulator`, installed so that `import pypto` resolves to it."""
    return _installed_emulator()


@pytest.fixture
def emu_session(emu: ModuleType) -> Iterator[Any]:
    """A fresh explicit emulator session for the test body."""
    with emu.session() as s:
        yield s


@pytest.fixture
def corpus_module(emu: ModuleType) -> Iterator[Callable[[str], ModuleType]]:
    """Loader: ``corpus_module("softmax")`` imports tests/emulator/corpus/softmax.py afresh."""
    loaded: list[str] = []

    def load(stem: str) -> ModuleType:
        path = CORPUS_DIR / f"{stem}.py"
        name = f"emu_corpus_{stem}_{next(_counter)}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None, path
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        loaded.append(name)
        spec.loader.exec_module(module)
        return module

    yield load
    for name in loaded:
        sys.modules.pop(name, None)


@pytest.fixture
def traces(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the kernels traced during the test (a trace-cache hit, or a program derived for another tile
    count, does not trace). The jit kernels of the test's module start with empty caches and the cache on."""
    frontend = importlib.import_module("runtime.emulator._frontend")
    seen: list[str] = []
    orig = frontend.JitFunction._trace_bound

    def counting(self: Any, s: Any, bound: Any, *rest: Any) -> Any:
        seen.append(self.__name__)
        return orig(self, s, bound, *rest)

    monkeypatch.setattr(frontend.JitFunction, "_trace_bound", counting)
    for k in vars(request.module).values():
        if isinstance(k, frontend.JitFunction):
            k._cache.clear()
    monkeypatch.delenv("PTO_FORGE_TRACE_CACHE", raising=False)
    return seen
