"""Where a campaign's work runs: Ray (embedded or a cluster), or one after another in this process.

:class:`RayExecutor` submits :func:`~orchestrator.adapters.campaign._sample.prepare_task` and
:func:`~orchestrator.adapters.campaign._sample.run_sample` as Ray tasks with the resources each task declares (``CPU``
by default; ``NPU: 1`` for a verification that needs a device, which Ray gives exclusively and exposes through
``ASCEND_RT_VISIBLE_DEVICES``). Ray never retries on its own (``max_retries=0``): the driver decides, so that
an infrastructure failure is counted in the campaign's records and the retry continues from the run's
checkpoint. An embedded cluster is fate-shared with the driver (:mod:`._reaper`) and every process it started
is gone after :meth:`RayExecutor.close`.

:class:`LocalExecutor` runs the same functions in this process, one at a time (the sequential baseline of
``bench/campaign_scale.py``; no Ray needed).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.adapters.campaign._reaper import descendants, sweep
from orchestrator.adapters.campaign._sample import InfraError, prepare_task, run_sample
from orchestrator.errors import ForgeError

__all__ = ["Executor", "LocalExecutor", "RayExecutor", "WorkFailed"]

log = logging.getLogger(__name__)

_REAPER = Path(__file__).with_name("_reaper.py")


class WorkFailed(Exception):
    """A submitted function did not return: ``infra`` says whether it was the infrastructure's failure."""

    def __init__(self, message: str, *, infra: bool = True) -> None:
        super().__init__(message)
        self.message, self.infra = message, infra


class Executor:
    """Submit, wait, collect, cancel. Handles are opaque."""

    parallelism: int = 1

    def submit(self, kind: str, payload: tuple[Any, ...], resources: dict[str, float]) -> Any:
        raise NotImplementedError

    def wait(self, handles: list[Any], timeout: float) -> list[Any]:
        """The handles among ``handles`` that have finished (waits at most ``timeout`` seconds for one)."""
        raise NotImplementedError

    def result(self, handle: Any) -> dict[str, Any]:
        """The finished function's return value.

        Raises:
            WorkFailed: it raised, or its worker died.
        """
        raise NotImplementedError

    def cancel(self, handle: Any) -> None:
        raise NotImplementedError

    def available(self) -> dict[str, float]:
        """Total resources of the cluster (``CPU``, ``NPU``, ...)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


_FUNCS: dict[str, Callable[..., dict[str, Any]]] = {"prepare": prepare_task, "sample": run_sample}


class LocalExecutor(Executor):
    """Runs each submission at once, in this process (sequential; no timeout, no cancel)."""

    def __init__(self) -> None:
        self._done: dict[int, tuple[bool, Any]] = {}
        self._next = 0

    def submit(self, kind: str, payload: tuple[Any, ...], resources: dict[str, float]) -> int:
        self._next += 1
        try:
            self._done[self._next] = (True, _FUNCS[kind](*payload))
        except InfraError as exc:
            self._done[self._next] = (False, WorkFailed(str(exc)))
        except ForgeError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported like a crashed worker
            self._done[self._next] = (False, WorkFailed(f"{type(exc).__name__}: {exc}"))
        return self._next

    def wait(self, handles: list[Any], timeout: float) -> list[Any]:
        return [h for h in handles if h in self._done]

    def result(self, handle: Any) -> dict[str, Any]:
        ok, value = self._done.pop(handle)
        if not ok:
            raise value
        return value

    def cancel(self, handle: Any) -> None:
        self._done.pop(handle, None)

    def available(self) -> dict[str, float]:
        return {"CPU": 1.0}

    def close(self) -> None:
        self._done.clear()


def _quiet_ray_env() -> None:
    """No usage-stats upload attempts (no network here); Ray's notice that a new local cluster uses token
    authentication (its secure default, kept) is not shown on the user's terminal."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    logging.getLogger("ray._private.authentication.authentication_token_setup").setLevel(logging.ERROR)


class RayExecutor(Executor):
    """Ray tasks; an embedded cluster (``address=None``), the cluster at ``address``, or the one this process is
    already connected to (then it is left running on :meth:`close`).

    Raises:
        ForgeError: Ray is not installed, or the cluster cannot be reached.
    """

    def __init__(self, *, workers: int, address: str | None = None, record: Path | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise ForgeError("campaigns run on Ray, which is not installed: pip install -e '.[campaign]' "
                             "(or: pip install 'ray>=2.9')", code=2) from None
        self.ray = ray
        self.parallelism = workers
        self.attached = ray.is_initialized()
        """This process is already connected to Ray (a notebook, a test session): use that cluster, leave it up."""
        self.embedded = address is None and not self.attached
        self._reaper: subprocess.Popen[bytes] | None = None
        self._temp: str | None = None
        self._ray_procs: dict[int, int] = {}
        self._before: dict[int, int] = {}
        _quiet_ray_env()
        before = self._before = descendants(os.getpid())
        try:
            if self.attached:
                pass
            elif self.embedded:
                self._reaper = subprocess.Popen([sys.executable, "-s", "-B", str(_REAPER), str(os.getpid())],
                                                start_new_session=True, stdin=subprocess.DEVNULL,
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                self._temp = tempfile.mkdtemp(prefix="forge-ray-")  # short: Ray's socket paths must fit 107 bytes
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, _temp_dir=self._temp,
                         logging_level=logging.WARNING, configure_logging=True)
            else:
                ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        except Exception as exc:
            self.close()
            raise ForgeError(f"cannot start Ray{' at ' + address if address else ''}: {type(exc).__name__}: "
                             f"{str(exc).splitlines()[0] if str(exc) else ''}") from None
        if self.embedded:
            self._ray_procs = {p: s for p, s in descendants(os.getpid()).items() if p not in before}
            if self._reaper is not None:
                self._ray_procs.pop(self._reaper.pid, None)
        if record is not None:
            record.write_text(f'{{"pid": {os.getpid()}, "embedded": {str(self.embedded).lower()}, '
                              f'"reaper": {self._reaper.pid if self._reaper else "null"}}}\n', encoding="utf-8")
        self._prepare = ray.remote(prepare_task)
        self._sample = ray.remote(run_sample)

    def submit(self, kind: str, payload: tuple[Any, ...], resources: dict[str, float]) -> Any:
        res = dict(resources)
        cpus = float(res.pop("CPU", 1.0))
        fn = self._prepare if kind == "prepare" else self._sample
        return fn.options(num_cpus=cpus, resources=res or None, max_retries=0).remote(*payload)

    def wait(self, handles: list[Any], timeout: float) -> list[Any]:
        if not handles:
            time.sleep(min(timeout, 0.2))
            return []
        done, _ = self.ray.wait(handles, num_returns=len(handles), timeout=timeout)
        return list(done)

    def result(self, handle: Any) -> dict[str, Any]:
        from ray.exceptions import RayError, RayTaskError

        try:
            return self.ray.get(handle)
        except RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            text = f"{type(cause).__name__}: {cause}" if cause is not None else str(exc).splitlines()[0]
            raise WorkFailed(text[:500], infra=True) from None
        except RayError as exc:  # the worker or its node died, the task was cancelled, out of memory
            raise WorkFailed(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:500]) from None

    def cancel(self, handle: Any) -> None:
        try:
            self.ray.cancel(handle, force=True)
        except Exception:  # noqa: BLE001 - already finished or gone
            pass

    def available(self) -> dict[str, float]:
        return {k: float(v) for k, v in self.ray.cluster_resources().items()}

    def close(self) -> None:
        """Shut Ray down; on an embedded cluster also stop every process it started and the watcher."""
        if self.ray.is_initialized() and not self.attached:
            if self.embedded:
                self._ray_procs.update({p: s for p, s in descendants(os.getpid()).items()
                                        if p not in self._before and (self._reaper is None or p != self._reaper.pid)})
            try:
                self.ray.shutdown()
            except Exception:  # noqa: BLE001 - shutting down anyway
                log.debug("ray.shutdown failed", exc_info=True)
        if self._ray_procs:
            sweep(self._ray_procs)
            self._ray_procs = {}
        if self._reaper is not None:
            self._reaper.terminate()
            try:
                self._reaper.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._reaper.kill()
            self._reaper = None
        if self._temp:
            import shutil

            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = None
