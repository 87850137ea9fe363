"""Build hook: bake the commit a wheel is built from into `capy/_commit.txt`.

An installed wheel has no git checkout beside it, so `capy --version` reads the commit from
this file. An editable install reads its checkout live and gets nothing baked. A wheel built
from an sdist finds the file the sdist carried; a tree without git bakes nothing, and
`capy --version` then leaves the commit out.
"""

from __future__ import annotations

import os
import subprocess
import tempfile

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

TARGET = "capy/_commit.txt"


class CommitHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        self._baked = None
        if version == "editable":
            return
        commit = _head_commit(self.root)
        if commit is None:
            return
        handle, self._baked = tempfile.mkstemp(prefix="capy-commit-", suffix=".txt")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(commit + "\n")
        build_data["force_include"][self._baked] = TARGET

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        if self._baked is not None:
            os.unlink(self._baked)


def _head_commit(root: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--verify", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None
