"""Real SQLCipher files under the test's private HOME; helpers to make them and read them back."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from capy.store import locate_store, open_store
from capy.store.database import connect
from capy.store.keys import DatabaseKey, KeySource


@dataclass
class StoreEnv:
    home: Path
    project: Path

    @property
    def db_path(self) -> Path:
        return locate_store().path

    @property
    def key_file(self) -> Path:
        return self.home / ".config" / "capy" / "db.key"

    def key(self) -> DatabaseKey:
        raw = bytes.fromhex(self.key_file.read_text().strip())
        return DatabaseKey(raw, KeySource(name="db", label="test"))

    def add_source(self, label: str, kind: str = "durable", body: bytes = b"raw") -> None:
        with open_store() as store:
            store.conn.execute(
                "INSERT INTO sources (label, kind, content_hash, content_type, raw, raw_size) "
                "VALUES (?, ?, 'h', 'plaintext', ?, ?)",
                (label, kind, body, len(body)),
            )

    def labels(self, key: DatabaseKey | None = None, path: Path | None = None) -> list[str]:
        conn = connect(path or self.db_path, key or self.key())
        try:
            return [row[0] for row in conn.execute("SELECT label FROM sources ORDER BY label")]
        finally:
            conn.close()

    def normalise(self, text: str) -> str:
        """Strip this run's temporary paths, hashes and timestamps from text a user would read."""
        text = text.replace(str(self.home), "<HOME>").replace(str(self.project), "<PROJECT>")
        text = re.sub(r"capy/[0-9a-f]{16}/", "capy/<HASH>/", text)
        return re.sub(r"\d{8}T\d{6}\.\d{6}Z", "<STAMP>", text)


@pytest.fixture
def env(isolated_environment: Path) -> StoreEnv:
    return StoreEnv(home=Path(os.environ["HOME"]), project=isolated_environment)


@pytest.fixture
def run_python():
    return _run_python


def _run_python(code: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter with this test's environment (HOME, XDG, cwd)."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd or Path.cwd(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
