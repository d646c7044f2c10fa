"""Reading a KernelBench task's ``FORMULA`` hint: which named index stands on which axis of which tensor.

The gym's task files write their formula with index letters, e.g. ``out[b, n] = x[b, k] @ W^T[k, n]``, and
name the dynamic axes with the same letters (``DYNAMIC_AXIS = ["B"]``). This module turns the formula into
``{tensor name: [index name or None per axis]}`` and ties ``forward``'s parameters to those tensors, so that
the importer can give every input axis a dim name and know which are dynamic. Only plain identifiers count as
index names (``2i``, ``g*C_g + c``, ``:`` or ``0`` leave that axis unnamed).
"""

from __future__ import annotations

import re

__all__ = ["formula_outputs", "formula_tensors", "match_params"]

_REF = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)(\^T)?\s*\[([^\[\]]*)\]")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def formula_tensors(formula: str) -> dict[str, list[list[str | None]]]:
    """Every ``name[i, j, ...]`` reference: name -> the index lists it appears with (in order, deduplicated).

    Transposed references (``W^T[k, n]``) are stored with their indices reversed, i.e. as the stored tensor.
    """
    out: dict[str, list[list[str | None]]] = {}
    for m in _REF.finditer(formula):
        name, transposed, body = m.group(1), m.group(2), m.group(3)
        idx: list[str | None] = []
        for part in body.split(","):
            part = part.strip()
            idx.append(part.upper() if _IDENT.fullmatch(part) else None)
        if transposed and len(idx) == 2:
            idx.reverse()
        seen = out.setdefault(name, [])
        if idx not in seen:
            seen.append(idx)
    return out


def formula_outputs(formula: str) -> list[str]:
    """Names on the left of the first ``=`` of each statement (``a, b = ...`` -> [a, b]; ``out[b, n] = ...`` ->
    [out]), in order; empty when the formula has no assignment form. Statements end at ``;`` or a line end (a
    triple-quoted FORMULA writes one per line, with ``#`` comments)."""
    names: list[str] = []
    text = "\n".join(line.split("#", 1)[0] for line in formula.splitlines())  # a multi-line FORMULA's comments
    for stmt in re.split(r"[;\n]", text):
        if "=" not in stmt:
            continue
        lhs = stmt.split("=", 1)[0]
        lhs = re.sub(r"\[[^\]]*\]", "", lhs)
        for part in lhs.split(","):
            part = part.strip()
            if _IDENT.fullmatch(part) and part not in names:
                names.append(part)
    return names


def match_params(params: list[str], ranks: list[int], tensors: dict[str, list[list[str | None]]],
                 outputs: list[str] | None = None) -> dict[str, list[str | None]]:
    """Tie each ``forward`` parameter to a formula tensor of the same rank; parameter -> axis index names.

    In order of trust: the same name (case-insensitive); a formula name of 3+ letters that the parameter
    name ends or starts with (``mask`` -> ``atten_mask``); a one-letter formula name that is the first letter
    of exactly one parameter (``Q`` -> ``query``). A formula tensor is used for one parameter at most; a
    parameter with no match is left out (its axes stay unnamed).

    ``outputs``: formula names that are only results (left-hand sides that no parameter is called): the two guessing
    rules never tie a parameter to them. ``smooth_scale`` ended with the output ``scale[m]`` and took its axis
    ``M`` (a per-channel vector named after the row axis; when the sizes agree, the wrong axis is made dynamic).
    """
    out: dict[str, list[str | None]] = {}
    used: set[str] = set(outputs or [])

    def take(param: str, rank: int, name: str) -> bool:
        for idx in tensors.get(name, []):
            if len(idx) == rank and any(idx):
                out[param] = idx
                used.add(name)
                return True
        return False

    lower = {n.lower(): n for n in tensors}
    for p, r in zip(params, ranks):
        if p.lower() in lower:
            take(p, r, lower[p.lower()])
    for p, r in zip(params, ranks):
        if p in out:
            continue
        for n in tensors:
            if n not in used and len(n) >= 3 and (p.lower().endswith(n.lower()) or p.lower().startswith(n.lower())):
                if take(p, r, n):
                    break
    for p, r in zip(params, ranks):
        if p in out:
            continue
        for n in tensors:
            if n in used or len(n) != 1:
                continue
            starters = [q for q in params if q.lower().startswith(n.lower()) and q not in out]
            if starters == [p] and take(p, r, n):
                break
    return out
