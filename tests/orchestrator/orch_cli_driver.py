"""``python -m orchestrator`` with the test verifier injected (the CLI itself is unchanged)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from orch_support import make_verifier  # noqa: E402

import orchestrator.api as api  # noqa: E402
from orchestrator.cli.main import main  # noqa: E402

if __name__ == "__main__":
    api._default_verifier = make_verifier  # type: ignore[attr-defined]
    sys.exit(main(sys.argv[1:]))
