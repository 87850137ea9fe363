"""A process SIGKILLed in the middle of an import leaves a vault that opens, passes
`PRAGMA integrity_check`, and completes on the next run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from capy.vault import open_vault
from capy.vault.importer import ImportOptions, import_sessions
from capy.vault.restore import restore_session

COPIES = 5
# Imports with a progress line per finished session, so the test can kill it mid-way.
IMPORTER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from capy.vault import open_vault
    from capy.vault.importer import ImportOptions, import_sessions

    def progress(done, total):
        print(f"done {done} of {total}", flush=True)

    with open_vault(Path(sys.argv[1])) as vault:
        import_sessions(vault, ImportOptions(source=Path(sys.argv[2])), progress=progress)
    """
)


def test_sigkill_mid_import_leaves_a_sound_vault_that_completes(
    vault_path, claude_transcripts, tmp_path, monkeypatch, sha256
):
    monkeypatch.setenv("CAPY_VAULT_KEY", "c" * 64)
    original = claude_transcripts / "spotter" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    source = tmp_path / "sessions"
    source.mkdir()
    data = original.read_bytes()
    for number in range(COPIES):  # distinct content, so every copy is compressed and indexed
        (source / f"copy-{number}.jsonl").write_bytes(data + f'"copy {number}"\n'.encode())
    child = subprocess.Popen(
        [sys.executable, "-c", IMPORTER, str(vault_path), str(source)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().startswith("done 1 of")  # one session committed
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL

    with open_vault(vault_path, verify=True) as vault:
        assert vault.conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        survived = vault.conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
        assert 1 <= survived < COPIES
        report = import_sessions(vault, ImportOptions(source=source))
        assert report.counts["unchanged"] == survived
        assert report.counts["imported"] == COPIES - survived
        last = restore_session(vault, f"copy-{COPIES - 1}", tmp_path / "out")
        rows = vault.conn.execute("SELECT count(DISTINCT rowid >> 20) FROM messages").fetchone()
    assert rows[0] == COPIES  # every session's messages indexed exactly once
    assert sha256(last[0].path) == sha256(source / f"copy-{COPIES - 1}.jsonl")
