"""The PyPTO toolchain version a kernel is written for: ``head`` (the repository HEAD) or ``0.2.0`` (the wheel).

The emulator follows one version's semantics at a time (``runtime.emulator.Options.compat``); the differences
between the two are listed, each with a probe, in docs/emulator-fidelity.md ("Target toolchains"). Which one
applies, first found wins:

1. the ``--compat`` flag of ``python -m runtime.emulator`` (a script run), or the caller's explicit choice;
2. ``pypto_target:`` in the op dir's SPEC.md front matter;
3. ``[toolchain] pypto_target = "..."`` in ``forge.toml`` in the op dir, then in the working directory
   (the file that also holds the model configuration, agents/config.py);
4. :data:`DEFAULT_TARGET`: ``head``, what user code (the public PyPTO gym) is written for.

A leaf module (standard library only): the emulator, the op-dir loader and the verifier all read it.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal, get_args

__all__ = ["DEFAULT_NPUARCH", "DEFAULT_TARGET", "NPUARCHS", "TARGETS", "NpuArch", "Target", "TargetError", "forge_toml_target",
           "op_dir_target", "parse_target"]

Target = Literal["head", "0.2.0"]
TARGETS: tuple[str, ...] = get_args(Target)
DEFAULT_TARGET: Target = "head"

NpuArch = Literal["DAV_2201", "DAV_3510"]
"""``pypto.platform.npuarch`` values an op dir may name (SPEC.md ``npuarch``): A2/A3, and the Ascend 950"""
NPUARCHS: tuple[str, ...] = get_args(NpuArch)
DEFAULT_NPUARCH: NpuArch = "DAV_2201"
"""the architecture of a kernel whose op dir names none: A2/A3 (the emulator's, the device's and the bisect shim's own
defaults say the same; those layers import nothing from here)"""
CONFIG_FILES = ("forge.toml",)


class TargetError(ValueError):
    """A target name or a forge.toml ``[toolchain]`` table that is not valid (one line naming the file)."""


def parse_target(value: object, where: str = "pypto_target") -> Target:
    """``"head"`` / ``"0.2.0"`` -> the target; anything else is a :class:`TargetError` naming ``where``."""
    text = str(value).strip().lower() if isinstance(value, str) else None
    if text == "head":
        return "head"
    if text == "0.2.0":
        return "0.2.0"
    raise TargetError(f"{where}: unknown PyPTO target {value!r}; use one of: {', '.join(TARGETS)} "
                      "(quote it in YAML: \"0.2.0\")")


def forge_toml_target(op_dir: Path | str | None, cwd: Path | str | None = None) -> tuple[Target, str] | None:
    """``(target, file)`` from the first ``forge.toml`` (op dir, then ``cwd``) whose ``[toolchain]`` names one."""
    dirs = [Path(d) for d in (op_dir, cwd if cwd is not None else Path.cwd()) if d is not None]
    for d in dirs:
        for name in CONFIG_FILES:
            path = d / name
            if not path.is_file():
                continue
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise TargetError(f"{path}: cannot read it ({exc})") from None
            table = data.get("toolchain")
            if table is None:
                continue
            if not isinstance(table, dict):
                raise TargetError(f"{path}: [toolchain] must be a table")
            unknown = sorted(set(table) - {"pypto_target"})
            if unknown:
                raise TargetError(f"{path}: [toolchain] has unknown key(s) {unknown}; allowed: pypto_target")
            if "pypto_target" in table:
                return parse_target(table["pypto_target"], f"{path}: [toolchain] pypto_target"), str(path)
    return None


def op_dir_target(op_dir: Path | str, spec: Any = None) -> tuple[Target, str]:
    """``(target, where it came from)`` of an op dir: SPEC.md's ``pypto_target``, else forge.toml's, else the
    default. Verify and bisect both run a kernel under it, so a bisect replays what verify saw."""
    if getattr(spec, "pypto_target", None):
        return parse_target(spec.pypto_target, "SPEC.md pypto_target"), "SPEC.md"
    found = forge_toml_target(op_dir)
    if found is not None:
        return found
    return DEFAULT_TARGET, "default"
