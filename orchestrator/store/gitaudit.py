"""The op dir's own audit history: a git dir at ``<op_dir>/.forge/git`` with the op dir as work tree.

Why a separate git dir: an op dir often lives inside another repository (``workspace/`` in ours); a
``.git`` there would turn it into a nested repo, so the history sits under ``.forge/`` (excluded from
itself) and never touches the enclosing repository. Each commit carries machine-readable trailers
(``forge-kind``, ``forge-module``, ``forge-file``, ``forge-verdict``, ``forge-report-hash``) so
:func:`audit` can prove every verified transition against the stored PASS report.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import logging
import os
import tempfile
import zlib
from pathlib import Path

import git
from git.index.base import IndexFile
from git.refs.symbolic import SymbolicReference
from pydantic import BaseModel, Field

from orchestrator.store.paths import FORGE_DIR, GIT_DIR, sha256_bytes
from orchestrator.store.reports import hash_for, parse_report, report_file
from runtime.verdicts import Verdict

log = logging.getLogger(__name__)

_IDENTITY = {
    "GIT_AUTHOR_NAME": "PTO Forge",
    "GIT_AUTHOR_EMAIL": "forge@localhost",
    "GIT_COMMITTER_NAME": "PTO Forge",
    "GIT_COMMITTER_EMAIL": "forge@localhost",
}
_WHO = f"{_IDENTITY['GIT_COMMITTER_NAME']} <{_IDENTITY['GIT_COMMITTER_EMAIL']}>"
"""Author and committer of every audit commit (the same identity the git processes get)."""
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


_REPOS: dict[str, git.Repo] = {}
"""git dir -> a GitPython Repo used only to read refs (pure Python)"""
_LAST: dict[str, tuple[str, dict[str, str]]] = {}
"""git dir -> (id, forge trailers) of the commit this process made last there"""


class CommitInfo(BaseModel):
    sha: str
    subject: str
    trailers: dict[str, str] = Field(default_factory=dict)


class AuditRepo:
    """Thin wrapper over ``git`` with ``GIT_DIR``/``GIT_WORK_TREE`` pinned to the op dir."""

    def __init__(self, op_dir: Path) -> None:
        self.op_dir = Path(op_dir).resolve()
        self.git_dir = self.op_dir / GIT_DIR
        self._git = git.Git(str(self.op_dir))
        self._git.update_environment(GIT_DIR=str(self.git_dir), GIT_WORK_TREE=str(self.op_dir),
                                     GIT_CONFIG_NOSYSTEM="1", **_IDENTITY)

    @property
    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file()

    def ensure(self) -> None:
        """Create the audit repository once (idempotent)."""
        if self.exists:
            return
        self.git_dir.parent.mkdir(parents=True, exist_ok=True)
        self._git.init("-q")  # GIT_WORK_TREE is set: git records core.worktree itself (no `git config` process)
        exclude = self.git_dir / "info" / "exclude"
        exclude.parent.mkdir(parents=True, exist_ok=True)
        exclude.write_text(f"{FORGE_DIR}/\n__pycache__/\n*.pyc\n", encoding="utf-8")

    def head(self) -> CommitInfo | None:
        commits = self.log(limit=1)
        return commits[0] if commits else None

    def head_sha(self) -> str | None:
        """HEAD's commit id read from the ref files (no git process), None before the first commit."""
        try:
            return SymbolicReference.dereference_recursive(self._repo(), "HEAD")
        except ValueError:  # no commit yet
            return None

    def commit(self, subject: str, trailers: dict[str, str], when: _dt.datetime | None = None) -> str:
        """Commit the whole work tree; idempotent when HEAD already carries the same trailers.

        ``when`` (the run's clock) dates the commit, so a replayed run rebuilds the same history. One git
        process per commit: ``git add -A`` stages the work tree with git's own ignore rules; the tree, the
        commit object and the ref are then written here (:meth:`_commit_index`), byte for byte what
        ``git commit -m`` writes (the same ids: tests/orchestrator/test_gitaudit_commit.py), because a git
        process costs 5-15 ms on a loaded machine and a run commits at every verified module. HEAD's id comes
        from the ref files, and its trailers from what this process committed last when HEAD is still that
        commit (else from ``git log``, e.g. on resume).
        """
        self.ensure()
        want = {k: str(v) for k, v in trailers.items()}
        sha = self.head_sha()
        known = _LAST.get(str(self.git_dir))
        if sha is not None:
            head_trailers = known[1] if known is not None and known[0] == sha else None
            if head_trailers is None:
                head = self.head()
                head_trailers = head.trailers if head is not None else None
            if head_trailers == want:
                return sha
        self._git.add("-A")
        body = "\n".join(f"{k}: {v}" for k, v in trailers.items())
        new = self._commit_index(f"{subject}\n\n{body}", sha, when)
        # what `log` would parse back from this message (forge-* trailers, stripped values)
        _LAST[str(self.git_dir)] = (new, {k: v.strip() for k, v in want.items() if k.startswith("forge-")})
        return new

    def _repo(self) -> git.Repo:
        repo = _REPOS.get(str(self.git_dir))
        if repo is None:
            repo = _REPOS[str(self.git_dir)] = git.Repo(str(self.git_dir))
        return repo

    def _commit_index(self, message: str, parent: str | None, when: _dt.datetime | None) -> str:
        """Write the index as a tree, a commit of it on ``parent`` and move HEAD's branch there (no git process).

        What ``git commit -q --allow-empty -m message`` does with the identity of :data:`_IDENTITY` and
        ``GIT_AUTHOR_DATE``/``GIT_COMMITTER_DATE`` = ``when``: the message cleaned up as git does for ``-m``
        (:func:`_clean_message`), the ref moved under its ``.lock`` file (a concurrent git fails to take it)
        and the move logged in the reflogs. Hooks and signing, which this private repository never
        configures, are not run.
        """
        index = self.git_dir / "index"
        tree = IndexFile(self._repo()).write_tree().hexsha if index.is_file() else \
            self._write_object("tree", b"")
        stamp = _git_stamp(when)
        header = f"tree {tree}\n" + (f"parent {parent}\n" if parent else "") + \
            f"author {_WHO} {stamp}\ncommitter {_WHO} {stamp}\n\n"
        text = _clean_message(message)
        if not text:
            raise ValueError("empty commit message")
        new = self._write_object("commit", (header + text).encode("utf-8"))
        first = text.split("\n", 1)[0]
        self._move_head(parent, new, f"{_WHO} {stamp}\tcommit{'' if parent else ' (initial)'}: {first}\n")
        return new

    def _write_object(self, kind: str, data: bytes) -> str:
        """Store a loose object (zlib of ``<kind> <size>\\0<data>``) as git does; returns its id."""
        raw = f"{kind} {len(data)}\0".encode() + data
        sha = hashlib.sha1(raw, usedforsecurity=False).hexdigest()
        path = self.git_dir / "objects" / sha[:2] / sha[2:]
        if path.is_file():
            return sha
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="tmp_obj_")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(zlib.compress(raw))
            os.chmod(tmp, 0o444)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return sha

    def _move_head(self, old: str | None, new: str, reflog: str) -> None:
        """Point HEAD's branch (or a detached HEAD) at ``new`` through a ``.lock`` file, as git does."""
        head_file = self.git_dir / "HEAD"
        content = head_file.read_text(encoding="utf-8").strip()
        names = ["HEAD"]
        ref = "HEAD"
        if content.startswith("ref: "):
            ref = content[len("ref: "):].strip()
            names.append(ref)
        target = self.git_dir / ref
        lock = target.with_name(target.name + ".lock")
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)  # FileExistsError: another git holds it
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(new + "\n")
            os.replace(lock, target)
        except BaseException:
            lock.unlink(missing_ok=True)
            raise
        line = f"{old or '0' * 40} {new} {reflog}"
        for name in names:
            log_file = self.git_dir / "logs" / name
            log_file.parent.mkdir(parents=True, exist_ok=True)
            with open(log_file, "a", encoding="utf-8") as fh:
                fh.write(line)

    def log(self, limit: int | None = None) -> list[CommitInfo]:
        """Commits newest first with parsed trailers."""
        if not self.exists:
            return []
        args = ["--format=%H%x00%B%x1e"]
        if limit:
            args.append(f"-{limit}")
        try:
            out = self._git.log(*args)
        except git.GitCommandError:  # no commits yet
            return []
        commits = []
        for chunk in out.split("\x1e"):
            chunk = chunk.strip("\n")
            if not chunk:
                continue
            sha, _, msg = chunk.partition("\x00")
            lines = msg.strip().splitlines()
            trailers = {}
            for line in lines[1:]:
                key, sep, value = line.partition(": ")
                if sep and key.startswith("forge-"):
                    trailers[key] = value.strip()
            commits.append(CommitInfo(sha=sha.strip(), subject=lines[0] if lines else "", trailers=trailers))
        return commits

    def blob(self, sha: str, path: str) -> bytes | None:
        try:
            return self._git.cat_file("blob", f"{sha}:{path}", stdout_as_string=False,
                                      strip_newline_in_stdout=False)
        except git.GitCommandError:
            return None

    def files(self, sha: str) -> list[str]:
        return [p for p in self._git.ls_tree("-r", "--name-only", sha).splitlines() if p]

    def raw(self, *args: str) -> str:
        """Run any git command against the audit repo (tests use it to tamper)."""
        return self._git.execute(["git", *args])


def _git_stamp(when: _dt.datetime | None) -> str:
    """``<unix seconds> <+hhmm>`` as git records ``GIT_*_DATE=<when as %Y-%m-%dT%H:%M:%S%z>`` (now when None;
    a naive time is local time, as git reads a date without zone)."""
    moment = (when or _dt.datetime.now()).astimezone() if when is None or when.tzinfo is None else when
    seconds = int(moment.replace(microsecond=0).timestamp())
    offset = int((moment.utcoffset() or _dt.timedelta()).total_seconds()) // 60
    sign = "-" if offset < 0 else "+"
    return f"{seconds} {sign}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"


_GIT_SPACE = " \t\n\r"
"""What git's ``isspace`` strips (not Python's wider set)."""


def _clean_message(message: str) -> str:
    """The message as ``git commit -m`` stores it (cleanup mode ``whitespace``: trailing blanks of every line,
    leading and trailing empty lines removed, runs of empty lines collapsed to one, a final newline)."""
    out: list[str] = []
    blank = False
    for line in message.split("\n"):
        line = line.rstrip(_GIT_SPACE)
        if not line:
            blank = bool(out)
            continue
        if blank:
            out.append("")
            blank = False
        out.append(line)
    return "".join(f"{line}\n" for line in out)


class HistoryProblem(BaseModel):
    """One audit-history finding: a commit whose verification evidence does not hold."""

    commit: str
    subject: str
    message: str


class HistoryAudit(BaseModel):
    """Result of the git-history audit (not the agents' golden-coverage audit, `agents.contracts.AuditResult`)."""

    ok: bool
    checked: int
    problems: list[HistoryProblem] = Field(default_factory=list)


def audit(op_dir: Path, transitions: list[tuple[str, int, str]] | None = None) -> HistoryAudit:
    """Prove every verified transition is committed and every verified commit is backed by its PASS report.

    Args:
        op_dir: the operator directory.
        transitions: (run id, module, report hash) of every "verified" state transition in the run traces;
            each must have a verify commit carrying that report hash.
    """
    repo = AuditRepo(op_dir)
    problems: list[HistoryProblem] = []
    checked = 0
    committed = {(c.trailers.get("forge-module"), c.trailers.get("forge-report-hash"))
                 for c in repo.log() if c.trailers.get("forge-kind") == "verify"}
    for run_id, module, report_hash in transitions or []:
        checked += 1
        if (str(module), report_hash) not in committed:
            problems.append(HistoryProblem(commit="(none)", subject=f"run {run_id}: M{module} verified",
                                         message=f"no verify commit carries report {report_hash[:16]}"))
    for c in repo.log():
        kind = c.trailers.get("forge-kind")
        if kind not in ("verify", "final", "design"):
            continue
        checked += 1

        def bad(msg: str, _c: CommitInfo = c) -> None:
            problems.append(HistoryProblem(commit=_c.sha, subject=_c.subject, message=msg))

        if kind == "design":
            for path, key in (("DESIGN.md", "forge-design-sha256"), ("module_interfaces.yaml", "forge-yaml-sha256")):
                data = repo.blob(c.sha, path)
                if data is None or sha256_bytes(data) != c.trailers.get(key):
                    bad(f"{path} in the commit does not match the approved design hash")
            continue
        rh = c.trailers.get("forge-report-hash", "")
        target = c.trailers.get("forge-file", "")
        if c.trailers.get("forge-verdict") != Verdict.PASS:
            bad(f"verified transition without a PASS verdict ({c.trailers.get('forge-verdict')})")
            continue
        rpath = report_file(repo.op_dir, rh) if rh else None
        if rpath is None:
            bad(f"no stored report with hash {rh or '(none)'}")
            continue
        try:
            report = parse_report(rpath)
        except (OSError, ValueError) as exc:
            bad(f"report {rpath.name} is unreadable: {str(exc).splitlines()[0]}")
            continue
        if report.verdict != Verdict.PASS:
            bad(f"report {rh[:12]} has verdict {report.verdict}, not PASS")
        if report.report_hash not in ("", rh):
            bad(f"report file {rpath.name} claims hash {report.report_hash}")
        hashes = report.hashes
        data = repo.blob(c.sha, target)
        expected = hash_for(hashes, target, repo.op_dir)
        if data is None:
            bad(f"{target} is not in the commit")
        elif expected is None:
            bad(f"report {rh[:12]} has no hash for {target}")
        elif sha256_bytes(data) != expected:
            bad(f"{target} in the commit differs from the file the PASS report verified")
        tree = set(repo.files(c.sha))
        for path in ("SPEC.md", "golden.py", "module_interfaces.yaml"):
            h = hash_for(hashes, path, repo.op_dir) if path in tree else None
            if h is not None:
                blob = repo.blob(c.sha, path)
                if blob is not None and sha256_bytes(blob) != h:
                    bad(f"{path} in the commit differs from the one the report verified against")
    return HistoryAudit(ok=not problems, checked=checked, problems=problems)
