"""`python -m runtime.emulator` (not built yet)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print("runtime.emulator: not built yet", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
