"""Where a package's data files are: the prompts and skills ship inside ``agents.prompts`` / ``agents.skills``."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["data_dir"]


def data_dir(package: str) -> Path:
    """The directory holding ``package``'s data files (found with importlib.resources, so an installed wheel
    works wherever it is installed). Raises RuntimeError for a zipped install, which would need extracting."""
    root = resources.files(package)
    if not isinstance(root, Path):
        raise RuntimeError(f"{package} must be installed as files, not from an archive (found {root!r})")
    return root
