"""Bringing PyPTO gym operators into PTO Forge: ``python -m orchestrator import`` (see docs/gym.md)."""

from orchestrator.adapters.gym._importer import GymImportError, ImportReport, import_gym_op

__all__ = ["GymImportError", "ImportReport", "import_gym_op"]
