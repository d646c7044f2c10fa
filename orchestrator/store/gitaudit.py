"""The op dir's own audit history: a git dir at ``<op_dir>/.forge/git`` with the op dir as work tree.

Why a separate git dir: an op dir often lives inside another repository (``workspace/`` in ours); a
``.git`` there would turn it into a nested repo, so the history sits under ``.forge/`` (excluded from
itself) and never touches the enclosing repository. Each commit carries machine-readable trailers
(``forge-kind``, ``forge-module``, ``forge-file``, ``forge-verdict``, ``forge-report-hash``) so
:func:`audit` can prove every verified transition against the stored PASS report.
"""

from __future__ import annotations

import datetime as _dt
import logging
from pathlib import Path

import git
from git.db import GitCmdObjectDB
from git.index.base import IndexFile
from git.objects.commit import Commit
from git.refs.log import RefLog
from git.refs.symbolic import SymbolicReference
from git.util import Actor, hex_to_bin
from gitdb.base import IStream
from gitdb.db.loose import LooseObjectDB
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
_ACTOR = Actor(_IDENTITY["GIT_COMMITTER_NAME"], _IDENTITY["GIT_COMMITTER_EMAIL"])
"""Author and committer of every audit commit (the identity the git processes get)."""


class _InProcessStore(GitCmdObjectDB):
    """GitPython's default object database, except that a new object is always written by gitdb's loose-object
    writer in this process: ``GitCmdObjectDB.store`` starts ``git hash-object`` for an object whose id is not
    known yet (a commit), which is the process this module avoids."""

    def store(self, istream: IStream) -> IStream:
        return LooseObjectDB.store(self, istream)


_REPOS: dict[str, git.Repo] = {}
"""git dir -> a GitPython Repo (object database :class:`_InProcessStore`): reads refs, writes trees, commits and
refs without a git process"""
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
        process per commit: ``git add -A`` stages the work tree with git's own ignore rules; GitPython then
        writes the tree, the commit and the ref in-process (:meth:`_commit_index`), because a git process costs
        5-15 ms on a loaded machine. HEAD's id comes from the ref files, and its trailers from what this process
        committed last when HEAD is still that commit (else from ``git log``, e.g. on resume).
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
        new = self._commit_index(f"{subject}\n\n{body}\n", sha, when)
        # what `log` would parse back from this message (forge-* trailers, stripped values)
        _LAST[str(self.git_dir)] = (new, {k: v.strip() for k, v in want.items() if k.startswith("forge-")})
        return new

    def _repo(self) -> git.Repo:
        repo = _REPOS.get(str(self.git_dir))
        if repo is None:
            repo = _REPOS[str(self.git_dir)] = git.Repo(str(self.git_dir), odbt=_InProcessStore)
        return repo

    def _commit_index(self, message: str, parent: str | None, when: _dt.datetime | None) -> str:
        """Commit the index on ``parent`` and move HEAD's branch there, with GitPython and no git process.

        What ``git commit -q --allow-empty -m`` wrote before, with the same ids for the messages :meth:`commit`
        makes (tests/orchestrator/test_gitaudit_commit.py compares them with a real git): GitPython writes the
        tree from the index, the commit object and the ref (under its ``.lock`` file). Two differences, neither
        in what :meth:`commit` writes: GitPython stores the message verbatim, where ``git commit -m`` first strips
        trailing blanks and blank lines (a message with those gets another id than git would give it), and it
        runs no hooks and signs nothing (this private repository configures neither). The reflog lines are
        written as git writes them (``commit: <subject>``), by GitPython's RefLog.
        """
        repo = self._repo()
        tree = IndexFile(repo).write_tree()
        moment = when if when is not None and when.tzinfo is not None else (when or _dt.datetime.now()).astimezone()
        parents = [Commit(repo, hex_to_bin(parent))] if parent else []
        new = Commit.create_from_tree(repo, tree, message, parent_commits=parents, head=False, author=_ACTOR,
                                      committer=_ACTOR, author_date=moment, commit_date=moment)
        head = repo.head
        refs: list[SymbolicReference] = [head]
        if not head.is_detached:
            refs.append(head.ref)
            head.ref.set_object(new)  # through the ref's .lock file; logmsg None: no object read back
        else:
            head.set_reference(new)
        subject = message.split("\n", 1)[0]
        old = hex_to_bin(parent) if parent else Commit.NULL_BIN_SHA
        for ref in refs:
            RefLog.append_entry(_ACTOR, RefLog.path(ref), old, new.binsha,
                                f"commit{'' if parent else ' (initial)'}: {subject}")
        return new.hexsha

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
    problems += _edited_since(repo)
    return HistoryAudit(ok=not problems, checked=checked, problems=problems)


def _edited_since(repo: AuditRepo) -> list[HistoryProblem]:
    """Files in the op dir that differ from their last verified version: the newest verify/final commit of each
    verified file, and SPEC.md / golden.py of the newest such commit. Why: the history can be intact while the
    delivered kernel in the folder was edited afterwards (a user's test: one appended line, and audit said OK).
    A file the cleanup removed is not a finding (the history keeps it)."""
    out: list[HistoryProblem] = []
    seen: set[str] = set()
    newest: CommitInfo | None = None
    for c in repo.log():  # newest first
        if c.trailers.get("forge-kind") not in ("verify", "final"):
            continue
        newest = newest or c
        target = c.trailers.get("forge-file", "")
        paths = [target] if target else []
        if c is newest:
            paths += ["SPEC.md", "golden.py"]
        for path in paths:
            if path in seen:
                continue
            seen.add(path)
            disk = repo.op_dir / path
            data = repo.blob(c.sha, path)
            if data is not None and disk.is_file() and disk.read_bytes() != data:
                out.append(HistoryProblem(commit=c.sha, subject=c.subject, message=f"{path} in the operator "
                                          "directory was changed after it was verified (it differs from this commit)"))
    return out
