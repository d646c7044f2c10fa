"""AuditRepo.commit: two git processes per commit, same history as before.

HEAD's id is read from the ref files and its trailers come from what this process committed last - only while
HEAD is still that commit; otherwise (a commit made elsewhere, a new process) ``git log`` decides, as before.
"""

from pathlib import Path

import git

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


def test_commit_is_idempotent_and_runs_two_git_commands(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a.txt").write_text("1")
    repo = AuditRepo(tmp_path)
    repo.ensure()
    calls = _count_git(monkeypatch)
    first = repo.commit("first", {"forge-kind": "verify", "forge-module": "1"})
    assert calls == ["add", "commit"]
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
