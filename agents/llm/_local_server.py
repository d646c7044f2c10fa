"""The child process that hosts llama.cpp's OpenAI-compatible server (``python -m agents.llm._local_server``).

It is a process of its own, not a thread of the run, for two reasons: llama.cpp logs heavily to file
descriptor 2, which the parent points at the run's ``local-model.log`` for this process alone, and the run's
terminal never sees that noise. It must never outlive the run, so it watches its parent: it exits when its
stdin (a pipe whose only writer is the parent) reaches end-of-file or when it is re-parented (the parent
died, even by ``kill -9``), checked every 0.2 s. The parent also stops it on every normal or abnormal exit.

Protocol: one JSON argument (``model_path``, ``alias``, ``n_ctx``, ``threads``); the child prints one JSON
line on stdout once the server listens (``{"url": ..., "n_ctx": ..., "n_ctx_train": ..., "n_params": ...}``)
or ``{"error": ...}`` when it cannot start, then waits for its parent to go.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import urllib.request
from typing import Any

POLL_S = 0.2


def _watch_parent(parent: int) -> None:
    """Exit as soon as the parent is gone: stdin at EOF, or this process re-parented."""

    def stdin_closed() -> None:
        try:
            while sys.stdin.buffer.read(1):
                pass
        except (OSError, ValueError):
            pass
        os._exit(0)

    threading.Thread(target=stdin_closed, daemon=True).start()
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(POLL_S)


def _meta(url: str) -> dict[str, Any]:
    """What llama.cpp read from the GGUF (context it was trained for, parameter count) and the context in use."""
    with urllib.request.urlopen(url.rstrip("/") + "/v1/models", timeout=30) as response:
        data = json.loads(response.read())
    meta = (data.get("data") or [{}])[0].get("meta") or {}
    return {"n_ctx": meta.get("n_ctx"), "n_ctx_train": meta.get("n_ctx_train"), "n_params": meta.get("n_params")}


def main(argv: list[str]) -> int:
    parent = os.getppid()
    config = json.loads(argv[0])
    try:
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = config["model_path"]
        params.model_alias = {config["alias"]}  # a set of names; the answer's `model` is the alias
        params.n_ctx = int(config["n_ctx"])
        params.n_parallel = 1
        params.cpuparams.n_threads = int(config["threads"])
        params.cpuparams_batch.n_threads = int(config["threads"])
        params.n_threads_http = 2
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # a free port, chosen by the OS
        params.use_jinja = True  # the model's own chat template, with tool-call support
        server = xllamacpp.Server(params)
        url = str(server.listening_address)
        info = {"url": url, **_meta(url)}
    except Exception as exc:  # reported to the parent in one line; the details are in the log
        print(f"local model server failed to start: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
        return 1
    print(json.dumps(info), flush=True)
    _watch_parent(parent)
    return 0  # pragma: no cover - _watch_parent ends the process


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
