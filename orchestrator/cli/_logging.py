"""The command line's log output: ``warning: ...`` lines on the stderr of the moment (``-v``: every record).

Why a module of its own: the CLI's entry point (``main.py``) parses and dispatches; how library log records
reach a user's terminal is a separate concern, with its own reason (UX audit s48, below).
"""

from __future__ import annotations

import logging
import sys

__all__ = ["configure_logging", "log_handler"]


class _CurrentStderr(logging.StreamHandler):
    """A log handler writing to whatever ``sys.stderr`` is when a record is emitted.

    Why (UX audit s48): ``logging.basicConfig`` kept the stderr of start-up, so a warning written while a run's
    status line was live (``model call failed (500); retry 1 in 1.0s``) was glued to the end of that line and
    left there. While the line is live, rich replaces ``sys.stderr`` with a proxy that prints above it."""

    @property  # type: ignore[override]
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


def configure_logging(*, verbose: bool) -> None:
    """Warnings for a user (``warning: ...``), or every record with its logger's name for a developer (``-v``)."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, handlers=[log_handler(verbose=verbose)])


def log_handler(*, verbose: bool) -> logging.Handler:
    """The CLI's one log handler: to the current stderr, ``warning: ...`` (``-v``: level and logger name)."""
    handler = _CurrentStderr()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s" if verbose else
                                           "%(levelname_lower)s: %(message)s"))
    handler.addFilter(_lower_level)
    return handler


def _lower_level(record: logging.LogRecord) -> bool:
    record.levelname_lower = record.levelname.lower()
    return True
