"""AuditRepo.commit: one git process per commit (``git add -A``), the same history ``git commit`` wrote.

HEAD's id is read from the ref files and its trailers come from what this process committed last - only while
HEAD is still that commit; otherwise (a commit made elsewhere, a new process) ``git log`` decides, as before.
The tree, commit object and ref are written in-process (GitPython): the ids must be exactly the ones
``git commit -m`` gives for the same work tree, message, identity and date (compared below against a real git).
"""

import datetime as _dt
import os
import subprocess
from pathlib import Path

import git
import pytest

from orchestrator.store import gitaudit
from orchestrator.store.gitaudit import AuditRepo


def _count_git(monkeypatch) -> list[str]:
    calls: list[str] = []
    orig = git.cmd.Git.execute

    def execute(self, command, *a, **k):
        calls.append(command[1] if isinstance(command, list) and len(command) > 1 else "?")
        return orig(self, command, *a, **k)

    monkeypatch.setattr(git.cmd.Git, "execute", execute)
    return calls


def test_commit_is_idempotent_and_runs_one_git_command(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a.txt").write_text("1")
    repo = AuditRepo(tmp_path)
    repo.ensure()
    calls = _count_git(monkeypatch)
    first = repo.commit("first", {"forge-kind": "verify", "forge-module": "1"})
    assert calls == ["add"]
    calls.clear()
    assert repo.commit("again", {"forge-kind": "verify", "forge-module": "1"}) == first  # same trailers: no commit
    assert calls == []
    (tmp_path / "a.txt").write_text("2")
    second = AuditRepo(tmp_path).commit("second", {"forge-kind": "verify", "forge-module": "2"})
    assert second != first and repo.head_sha() == second
    log = repo.log()
    assert [c.sha for c in log] == [second, first]
    assert log[0].trailers == {"forge-kind": "verify", "forge-module": "2"}


def test_a_commit_made_elsewhere_is_read_from_git(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("1")
    repo = AuditRepo(tmp_path)
    first = repo.commit("first", {"forge-kind": "verify"})
    repo.raw("commit", "-q", "--allow-empty", "-m", "by hand\n\nforge-kind: design")
    assert repo.head_sha() != first
    # HEAD is not the commit this process made: its trailers come from git log, so this is a new commit
    third = repo.commit("third", {"forge-kind": "verify"})
    assert third not in (first, repo.log()[1].sha)
    # and a process that made no commit here (cache empty) asks git too
    gitaudit._LAST.clear()
    assert repo.commit("same again", {"forge-kind": "verify"}) == third


def _git_cli(op: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """git on the audit repository of ``op`` the way AuditRepo runs it (its identity, no system config)."""
    full = {**os.environ, "GIT_DIR": str(op / ".forge" / "git"), "GIT_WORK_TREE": str(op), "GIT_CONFIG_NOSYSTEM": "1",
            **gitaudit._IDENTITY, **(env or {})}
    return subprocess.run(["git", *args], cwd=op, env=full, check=True, capture_output=True, text=True).stdout


def _cli_commit(op: Path, subject: str, trailers: dict[str, str], when: _dt.datetime | None) -> str:
    """What AuditRepo.commit did before it wrote commits itself: ``git add -A`` + ``git commit -m``."""
    _git_cli(op, "add", "-A")
    body = "\n".join(f"{k}: {v}" for k, v in trailers.items())
    env = {}
    if when is not None:
        stamp = when.strftime("%Y-%m-%dT%H:%M:%S%z") or when.isoformat()
        env = {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    _git_cli(op, "commit", "-q", "--allow-empty", "-m", f"{subject}\n\n{body}", env=env)
    return _git_cli(op, "rev-parse", "HEAD").strip()


_UTC = _dt.UTC
_STEPS = [  # (files to write, files to delete, subject, trailers, when)
    ({"SPEC.md": "spec\n", "golden.py": "def golden(x):\n    return x\n", ".forge/run-x/junk": "not committed"},
     [], "design: approved (1 module(s), L1)", {"forge-kind": "design", "forge-run": "r1"},
     _dt.datetime(2026, 1, 1, 0, 0, 5, tzinfo=_UTC)),
    ({"stages/m1.py": "x = 1\n", "sub/deep/b.bin": "\x00\x01", "__pycache__/c.pyc": "cached"}, [],
     "verify: M1 PASS stages/m1.py report abc", {"forge-kind": "verify", "forge-module": "1", "forge-verdict": "PASS"},
     _dt.datetime(2026, 1, 1, 0, 1, 7, 999_999, tzinfo=_dt.timezone(_dt.timedelta(hours=5, minutes=30)))),
    ({"MEMORY.md": "# memory\n"}, ["stages/m1.py"], "final: sqrecip delivered, PASS report 0123",
     {"forge-kind": "final", "forge-file": "sqrecip_impl.py"},
     _dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=_dt.timezone(-_dt.timedelta(hours=7)))),
    ({}, [], "nothing changed", {"forge-kind": "verify", "forge-module": "2"},
     _dt.datetime(2026, 1, 3, 12, 0, 0)),  # naive: local time, as git reads a date without zone
]


def _apply(op: Path, write: dict[str, str], delete: list[str]) -> None:
    for rel, text in write.items():
        (op / rel).parent.mkdir(parents=True, exist_ok=True)
        (op / rel).write_text(text)
    for rel in delete:
        (op / rel).unlink()


def test_in_process_commits_are_the_commits_git_writes(tmp_path: Path) -> None:
    """Same work tree, message, identity and date: the in-process commit ids equal ``git commit``'s, commit after
    commit (deleted files, nested and binary files, an executable bit, naive and zoned dates)."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for op in (ours, theirs):
        op.mkdir()
        AuditRepo(op).ensure()
    repo = AuditRepo(ours)
    ids = []
    for i, (write, delete, subject, trailers, when) in enumerate(_STEPS):
        for op in (ours, theirs):
            _apply(op, write, delete)
            if i == 1:
                (op / "stages" / "m1.py").chmod(0o755)
        mine = repo.commit(subject, trailers, when=when)
        assert mine == _cli_commit(theirs, subject, trailers, when), f"step {i}: {subject!r}"
        ids.append(mine)
    assert _git_cli(ours, "rev-list", "HEAD").split() == list(reversed(ids))
    assert _git_cli(ours, "status", "--porcelain") == ""  # the index is the committed tree
    _git_cli(ours, "fsck", "--strict", "--no-dangling")  # every object well formed (raises on a problem)
    reflog = _git_cli(ours, "reflog", "--format=%H %gs").splitlines()
    assert reflog[-1] == f"{ids[0]} commit (initial): design: approved (1 module(s), L1)"
    assert reflog[0].startswith(f"{ids[-1]} commit: nothing changed")
    assert [c.trailers for c in repo.log()][0] == {"forge-kind": "verify", "forge-module": "2"}


def test_commit_of_an_empty_work_tree_and_without_a_date(tmp_path: Path) -> None:
    """Nothing to stage (no index yet) gives git's empty tree; no ``when`` dates the commit now."""
    repo = AuditRepo(tmp_path)
    before = int(_dt.datetime.now(_UTC).timestamp())
    sha = repo.commit("empty", {"forge-kind": "design"})
    assert _git_cli(tmp_path, "rev-parse", f"{sha}^{{tree}}").strip() == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    when = int(_git_cli(tmp_path, "log", "-1", "--format=%ct").strip())
    assert before <= when <= before + 60
    _git_cli(tmp_path, "fsck", "--strict", "--no-dangling")


def test_a_ref_locked_by_another_git_is_not_overwritten(tmp_path: Path) -> None:
    """The branch moves under its .lock file as git's does: a lock held elsewhere stops the commit, HEAD stays."""
    (tmp_path / "a.txt").write_text("1")
    repo = AuditRepo(tmp_path)
    first = repo.commit("first", {"forge-kind": "verify"})
    branch = (tmp_path / ".forge" / "git" / "HEAD").read_text().split("ref: ")[1].strip()
    lock = tmp_path / ".forge" / "git" / (branch + ".lock")
    lock.write_text("held")
    (tmp_path / "a.txt").write_text("2")
    with pytest.raises(OSError):
        repo.commit("second", {"forge-kind": "verify", "forge-module": "2"})
    assert repo.head_sha() == first and lock.read_text() == "held"


def test_init_records_the_work_tree_in_one_git_process(tmp_path: Path, monkeypatch) -> None:
    calls = _count_git(monkeypatch)
    AuditRepo(tmp_path).ensure()
    assert calls == ["init"]
    assert _git_cli(tmp_path, "config", "core.worktree").strip() == str(tmp_path.resolve())


def test_a_message_is_stored_verbatim(tmp_path: Path) -> None:
    """The one documented difference from ``git commit -m`` (AuditRepo._commit_index): GitPython keeps trailing blanks
    that git's message cleanup strips. AuditRepo's own messages have none; ``log`` reads either the same way."""
    repo = AuditRepo(tmp_path)
    repo.commit("subject  ", {"forge-kind": "verify", "forge-note": "x"})
    assert _git_cli(tmp_path, "log", "-1", "--format=%B") == "subject  \n\nforge-kind: verify\nforge-note: x\n\n"
    assert repo.log()[0].subject == "subject  " and repo.log()[0].trailers == {"forge-kind": "verify",
                                                                               "forge-note": "x"}
