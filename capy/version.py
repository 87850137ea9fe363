"""`capy --version`: the name, the version and the commit capy was built from.

The version is `capy.__version__`, which the build reads too (pyproject's dynamic version), so
it holds whatever the distribution is called and costs no `importlib.metadata` scan. The commit
comes from the git checkout capy runs from (an editable install, or a source tree on the path),
read from `.git` without starting git; else from `_commit.txt`, which the wheel build writes
(hatch_build.py); else it is left out.
"""

from __future__ import annotations

import os

from capy import __version__

NAME = "capy"
BUILT_COMMIT_FILE = "_commit.txt"
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_HEX = frozenset("0123456789abcdef")
SHORT_COMMIT = 12


def version_line() -> str:
    commit = current_commit()
    suffix = f" (commit {commit[:SHORT_COMMIT]})" if commit else ""
    return f"{NAME} {__version__}{suffix}"


def current_commit() -> str | None:
    checkout = os.path.dirname(_PACKAGE_DIR)
    if os.path.exists(os.path.join(checkout, ".git")):
        return checkout_commit(checkout)
    return _built_commit()


def checkout_commit(checkout: str) -> str | None:
    """HEAD of the git checkout at `checkout` (a main or linked worktree), or None."""
    git_dir = _git_dir(checkout)
    if git_dir is None:
        return None
    head = _read(os.path.join(git_dir, "HEAD"))
    if head is None:
        return None
    if not head.startswith("ref:"):
        return head if _is_sha(head) else None  # a detached HEAD names its commit
    ref = head.removeprefix("ref:").strip()
    common = _common_dir(git_dir)
    for folder in dict.fromkeys((git_dir, common)):
        value = _read(os.path.join(folder, ref))
        if value is not None and _is_sha(value):
            return value
    return _packed_ref(common, ref)


def _git_dir(checkout: str) -> str | None:
    dot_git = os.path.join(checkout, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    pointer = _read(dot_git)  # a linked worktree: "gitdir: <main>/.git/worktrees/<name>"
    if pointer is None or not pointer.startswith("gitdir:"):
        return None
    return os.path.join(checkout, pointer.removeprefix("gitdir:").strip())


def _common_dir(git_dir: str) -> str:
    common = _read(os.path.join(git_dir, "commondir"))
    return os.path.normpath(os.path.join(git_dir, common)) if common else git_dir


def _packed_ref(common: str, ref: str) -> str | None:
    try:
        with open(os.path.join(common, "packed-refs"), encoding="utf-8") as stream:
            for line in stream:
                sha, _, name = line.strip().partition(" ")
                if name == ref and _is_sha(sha):
                    return sha
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _built_commit() -> str | None:
    value = _read(os.path.join(_PACKAGE_DIR, BUILT_COMMIT_FILE))
    return value if value is not None and _is_sha(value) else None


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as stream:
            return stream.readline().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and set(text) <= _HEX
