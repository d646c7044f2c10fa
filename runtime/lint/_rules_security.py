"""Security and integrity rules (all S0): kernel files are untrusted code written by a model.

The verifier runs kernels in a sandbox, but a kernel that imports ``subprocess``, reads the golden, swallows the
kernel's exception, or picks a different code path when an environment variable says "under test" is either
an escape attempt or a way to fool the verdict. None of these has a legitimate use in a kernel file, so they
are rejected before anything runs. All checks are on the AST.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from runtime.lint._registry import Hit, LintContext, check
from runtime.lint._source import ParsedFile, dotted
from runtime.lint._util import at, kernel_pf

ALLOWED_IMPORTS = ("pypto", "numpy", "math", "torch", "dataclasses", "typing", "functools", "ml_dtypes")
"""The brief's allow-list plus ``ml_dtypes`` (dtype objects only: wrappers name bf16/fp8 numpy dtypes with it)."""
_BANNED_BUILTINS = {"globals", "locals", "vars", "open", "eval", "exec", "compile", "__import__", "breakpoint",
                    "input", "memoryview"}
_BANNED_MODULES = ("subprocess", "socket", "ctypes", "importlib", "inspect", "multiprocessing", "threading",
                   "pickle", "marshal", "shutil", "signal", "urllib", "http", "builtins")
_BANNED_EXACT = {"sys._getframe", "sys.modules", "sys.settrace", "sys.setprofile", "os.system", "os.popen",
                 "os.fork", "os.forkpty", "os.kill", "os.remove", "os.unlink", "os.rmdir", "os.putenv",
                 "os.chdir", "io.open", "pathlib.Path"}
_BANNED_PREFIX = ("os.exec", "os.spawn", "os.posix_spawn")
_SAFE_DUNDERS = {"__name__", "__doc__", "__init__", "__main__", "__all__"}
_ENV = ("os.environ", "os.getenv", "os.environb", "posix.environ")


_SMUGGLED = {"os", "sys", "subprocess", "builtins", "importlib", "ctypes", "socket", "shutil", "pickle",
             "inspect", "io", "pathlib", "posix", "nt"}


def _banned_name(full: str) -> str | None:
    parts = full.split(".")
    root = parts[0]
    if root in _BANNED_MODULES:
        return root
    smuggled = next((p for p in parts[1:] if p in _SMUGGLED), None) if root in ALLOWED_IMPORTS else None
    if smuggled:  # e.g. ``np.os.system``: a banned module reached through an allowed one
        return smuggled
    if full in _BANNED_EXACT or full.startswith(_BANNED_PREFIX):
        return full
    for exact in _BANNED_EXACT:
        if full.startswith(exact + "."):
            return exact
    return None


@check("PF01")
def pf01_import_allow_list(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for node in pf.by_type.get(ast.Import, []):
        for alias in node.names:  # type: ignore[attr-defined]
            if alias.name.split(".")[0] not in ALLOWED_IMPORTS:
                yield at(node, f"import of `{alias.name}` in a kernel file (allowed: {', '.join(ALLOWED_IMPORTS)})")
    for node in pf.by_type.get(ast.ImportFrom, []):
        mod = node.module or ""  # type: ignore[attr-defined]
        if node.level:  # type: ignore[attr-defined]
            yield at(node, "relative import in a kernel file")
        elif mod == "__future__":
            yield at(node, "`from __future__ import ...` in a kernel file (string annotations hide "
                     "`pypto.Tensor` parameters from the frontend)")
        elif mod.split(".")[0] not in ALLOWED_IMPORTS:
            yield at(node, f"import from `{mod}` in a kernel file (allowed: {', '.join(ALLOWED_IMPORTS)})")


def _module_roots(pf: ParsedFile) -> set[str]:
    roots = set()
    for node in pf.by_type.get(ast.Import, []):
        for alias in node.names:  # type: ignore[attr-defined]
            roots.add(alias.asname or alias.name.split(".")[0])
    for node in pf.by_type.get(ast.ImportFrom, []):
        for alias in node.names:  # type: ignore[attr-defined]
            roots.add(alias.asname or alias.name)
    return roots | {"builtins", "__builtins__"}


@check("PF02")
def pf02_banned_calls(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    shadowed = set(pf.functions)
    for call in pf.by_type.get(ast.Call, []):
        f = call.func  # type: ignore[attr-defined]
        if isinstance(f, ast.Name) and f.id in _BANNED_BUILTINS and f.id not in shadowed and f.id not in pf.aliases:
            yield at(call, f"`{f.id}(...)` is not allowed in a kernel file")
            continue
        if isinstance(f, ast.Name) and f.id in ("getattr", "setattr", "delattr", "hasattr"):
            args = call.args  # type: ignore[attr-defined]
            attr = args[1] if len(args) > 1 else None
            if not (isinstance(attr, ast.Constant) and isinstance(attr.value, str)) or attr.value.startswith("__"):
                yield at(call, f"`{f.id}` with a computed or dunder attribute name is not allowed")
            elif args and dotted(args[0]).split(".")[0] in _module_roots(pf):
                yield at(call, f"`{f.id}` on module `{dotted(args[0])}`; use plain attribute access")
    for node in pf.by_type.get(ast.Attribute, []):
        if isinstance(pf.parents.get(node), ast.Attribute):
            continue
        full = pf.name(node)
        bad = _banned_name(full) if full else None
        if bad:
            yield at(node, f"`{full}` is not allowed in a kernel file")
        attr = node.attr  # type: ignore[attr-defined]
        if attr.startswith("__") and attr.endswith("__") and attr not in _SAFE_DUNDERS:
            yield at(node, f"dunder attribute `.{attr}` (introspection) is not allowed in a kernel file")
    for node in pf.by_type.get(ast.Name, []):
        if node.id in ("__builtins__", "__loader__", "__spec__"):  # type: ignore[attr-defined]
            yield at(node, f"`{node.id}` is not allowed in a kernel file")  # type: ignore[attr-defined]
        elif isinstance(node.ctx, ast.Load) and pf.aliases.get(node.id, "") and _banned_name(pf.aliases[node.id]):  # type: ignore[attr-defined]
            yield at(node, f"`{node.id}` (= `{pf.aliases[node.id]}`) is not allowed in a kernel file")  # type: ignore[attr-defined]
    roots = _module_roots(pf)
    for kind in (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete):
        for node in pf.by_type.get(kind, []):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]  # type: ignore[attr-defined]
            for t in targets:
                base = t.value if isinstance(t, (ast.Attribute, ast.Subscript)) else None
                root = dotted(base) if base is not None else ""
                if root and root.split(".")[0] in roots:
                    yield at(t, f"assignment into module `{root}` (monkeypatching) is not allowed")


def _reaches_jit(pf: ParsedFile) -> set[str]:
    """Names of module-level functions from which a JIT kernel is reachable through bare-name calls (linear)."""
    jit = pf.jit_names()
    callers: dict[str, set[str]] = {}
    for name, fn in pf.functions.items():
        for c in pf.calls_in.get(fn, []):
            if isinstance(c.func, ast.Name):
                callers.setdefault(c.func.id, set()).add(name)
    names, todo = set(jit), list(jit)
    while todo:
        for caller in callers.get(todo.pop(), ()):
            if caller not in names:
                names.add(caller)
                todo.append(caller)
    return names


def _calls_any(nodes: list[ast.stmt], names: set[str]) -> ast.Call | None:
    for stmt in nodes:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names:
                return n
    return None


@check("PF03")
def pf03_no_try_around_jit(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    if not pf.jit_fns:
        return
    targets = _reaches_jit(pf)
    for kind in (ast.Try, getattr(ast, "TryStar", ast.Try)):
        for node in set(pf.by_type.get(kind, [])):
            swallows = bool(node.handlers) or any(  # type: ignore[attr-defined]
                isinstance(n, (ast.Return, ast.Break, ast.Continue)) for s in node.finalbody for n in ast.walk(s))  # type: ignore[attr-defined]
            scope = pf.enclosing_fn.get(node)
            names = targets | (pf.kernel_names_in(scope) if scope is not None else set())
            call = _calls_any(node.body, names)  # type: ignore[attr-defined]
            if swallows and call is not None:
                yield at(node, f"try/except around the kernel call `{call.func.id}(...)` (line {call.lineno}); "  # type: ignore[attr-defined]
                         "a failing kernel must fail verification")
    for node in pf.by_type.get(ast.With, []):
        suppress = any("suppress" in pf.name(item.context_expr) for item in node.items)  # type: ignore[attr-defined]
        scope = pf.enclosing_fn.get(node)
        call = _calls_any(node.body, targets | (pf.kernel_names_in(scope) if scope is not None else set()))  # type: ignore[attr-defined]
        if suppress and call is not None:
            yield at(node, "`suppress(...)` around the kernel call")


def _env_read(node: ast.AST, pf: ParsedFile, tainted: set[str]) -> bool:
    for n in ast.walk(node):
        if isinstance(n, (ast.Attribute, ast.Name)):
            full = pf.name(n)
            if (full.startswith(_ENV) or full.endswith((".environ", ".getenv", ".environb"))
                    or (isinstance(n, ast.Name) and n.id in tainted)):
                return True
    return False


@check("PF04")
def pf04_no_env_branch(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    if "environ" not in ctx.source and "getenv" not in ctx.source:
        return  # every route to the environment spells one of these (obfuscated access is PF01/PF02's)
    tainted: set[str] = set()
    assigns = pf.by_type.get(ast.Assign, []) + pf.by_type.get(ast.AnnAssign, [])
    for _ in range(4):
        before = len(tainted)
        for node in assigns:
            value = node.value  # type: ignore[attr-defined]
            if value is not None and _env_read(value, pf, tainted):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
                tainted |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if len(tainted) == before:
            break
    for kind in (ast.If, ast.IfExp, ast.While):
        for node in pf.by_type.get(kind, []):
            if not _env_read(node.test, pf, tainted):  # type: ignore[attr-defined]
                continue
            branches = [node.body, node.orelse]  # type: ignore[attr-defined]
            has_call = any(isinstance(n, ast.Call) for b in branches
                           for s in (b if isinstance(b, list) else [b]) for n in ast.walk(s))
            if has_call:
                yield at(node, "branch on an environment variable selects the code path")
