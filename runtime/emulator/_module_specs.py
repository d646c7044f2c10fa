"""Import-system identity of the emulated packages: module specs and installed-distribution metadata.

Why (session 49): a gym script sometimes asks the import system about the toolchain before it imports it -
``importlib.util.find_spec("pypto") is None`` to skip when PyPTO is missing, ``importlib.metadata.version("pypto")``
or ``version("torch_npu")`` for a log line or a version gate. On a device host both packages are installed wheels,
so those calls answer. Here:

* ``runtime.emulator.install()`` (the verifier's sandbox, library use) put the modules in ``sys.modules`` with
  ``__spec__ = None``, and ``find_spec("pypto")`` raised ``ValueError: pypto.__spec__ is None``; under the script
  runner the root had a spec but the wheel-named modules (``pypto.enum``, ``pypto.op.math`` ...) did not, with
  the same ``ValueError`` for ``find_spec("pypto.enum")``;
* ``importlib.metadata.version("pypto")`` was ``PackageNotFoundError`` unless the real wheel happened to be
  installed beside the emulator (never in the project's venv), and ``version("torch_npu")`` always was.

:func:`give_specs` gives every such module a spec (loader: the finder serving it, else none), and
:class:`StandInDistribution` is the metadata the runner's finders report for ``pypto`` (its ``__version__``) and
``torch_npu`` (the stand-in's ``__version__``); the distributions are found only under the runner, where the
finders are on ``sys.meta_path``, never in the sandbox.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.metadata
import re
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = ["StandInDistribution", "distributions_for", "give_specs", "spec_for"]


def give_specs(modules: Mapping[str, Any], loader: importlib.abc.Loader | None = None) -> None:
    """Give each module of ``modules`` (name -> module; other objects are skipped) that has no ``__spec__`` a spec
    named by its key; ``pypto`` and the modules with submodules are packages. Without a loader (``install()``: no
    finder serves them) the spec has none, so ``repr(module)`` stays ``<module 'pypto.x'>`` and names nothing of the
    emulator (tests/emulator/test_wheel_api.py)."""
    names = set(modules)
    for name, mod in modules.items():
        if not isinstance(mod, types.ModuleType) or getattr(mod, "__spec__", None) is not None:
            continue
        package = any(other.startswith(name + ".") for other in names) or name == "pypto"
        mod.__spec__ = spec_for(name, mod, loader, package)


def spec_for(name: str, mod: types.ModuleType, loader: Any, package: bool) -> importlib.machinery.ModuleSpec:
    """A spec for ``mod``; located at its ``__file__`` (the wheel's path, `_wheel_identity.place`) when it has one,
    so ``repr(mod)`` stays ``<module 'pypto' from '.../pypto/__init__.py'>`` rather than naming the loader."""
    spec = importlib.machinery.ModuleSpec(name, loader, is_package=package)
    if package:
        spec.submodule_search_locations = []
    origin = mod.__dict__.get("__file__")
    if isinstance(origin, str):
        spec.origin = origin
        spec.has_location = True
    return spec


def _normalize(name: str) -> str:
    """PEP 503 normalisation (``torch-npu``, ``Torch_NPU`` and ``torch.npu`` name one distribution)."""
    return re.sub(r"[-_.]+", "_", name).lower()


class StandInDistribution(importlib.metadata.Distribution):
    """An installed distribution as ``importlib.metadata`` sees it: its METADATA names it and its version."""

    def __init__(self, name: str, version: str, summary: str) -> None:
        self._name = name
        self._version = version
        self._summary = summary

    def read_text(self, filename: str) -> str | None:
        if filename in ("METADATA", "PKG-INFO"):
            return (f"Metadata-Version: 2.1\nName: {self._name}\nVersion: {self._version}\n"
                    f"Summary: {self._summary}\n")
        if filename == "top_level.txt":
            return self._name.replace("-", "_") + "\n"
        return None

    def locate_file(self, path: str | Any) -> Path:
        return Path(__file__).parent / str(path)


def distributions_for(context: Any, provided: Mapping[str, tuple[str, Any]]) -> Iterator[StandInDistribution]:
    """The stand-in distributions a finder reports for ``context`` (an ``importlib.metadata.DistributionFinder
    .Context``): ``provided`` maps a normalised name to (the distribution's name, a callable giving its version);
    a context without a name lists them all, as ``importlib.metadata.distributions()`` does."""
    wanted = getattr(context, "name", None)
    for key, (name, version) in provided.items():
        if wanted is None or _normalize(wanted) == key:
            yield StandInDistribution(name, str(version()), "PTO Forge emulator stand-in")
