"""``python -m orchestrator``: the PTO Forge command line."""

import sys

from orchestrator.cli.main import main

sys.exit(main())
