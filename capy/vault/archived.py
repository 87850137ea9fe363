"""An archived session read back from its blobs, for the code that rebuilds what is derived
from it (reindex, merge).

The files are written to a private temporary folder laid out as they were imported (transcript
plus `<stem>/subagents/` sidecars) and parsed by the same parsers an import uses, so rows rebuilt
from blobs are exactly the rows an import of the original files would build.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from capy.vault.blobs import load_blob
from capy.vault.errors import CorruptBlobError

if TYPE_CHECKING:
    from sqlcipher3 import Connection

    from capy.rules import RuleSet
    from capy.sessions.model import Session


def parse_archived(conn: Connection, session_rowid: int, rules: RuleSet) -> Session:
    """Parse (not redact) the archived session; raises `CorruptBlobError` for a bad blob."""
    from capy.sessions.discovery import SessionFile, parse_session

    platform, source_path = conn.execute(
        "SELECT platform, source_path FROM sessions WHERE id = ?", (session_rowid,)
    ).fetchone()
    files = conn.execute(
        "SELECT relpath, blob_hash FROM session_files WHERE session = ? ORDER BY relpath",
        (session_rowid,),
    ).fetchall()
    main = Path(source_path).name
    if main not in {relpath for relpath, _ in files}:
        raise CorruptBlobError(
            f"session {session_rowid} has lost its transcript file {main!r}; import the session "
            "again from its original file"
        )
    with tempfile.TemporaryDirectory(prefix="capy-vault-") as folder:  # 0700: transcripts
        base = Path(folder)
        for relpath, digest in files:
            target = base / relpath
            if ".." in Path(relpath).parts or Path(relpath).is_absolute():
                raise CorruptBlobError(f"refusing the archived file name {relpath!r}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(load_blob(conn, digest))
        item = SessionFile(base / main, _format_of(platform, base / main, rules), platform)
        return parse_session(item, rules.view("transcripts"))


def _format_of(platform: str, path: Path, rules: RuleSet) -> str:
    """The platform's transcript format from the pack; sniffed when the pack does not say."""
    from capy.sessions.discovery import sniff_format

    for item in rules.view("platforms").platforms:
        if item.key == platform and item.transcripts is not None:
            return item.transcripts.format
    return sniff_format(path, rules.view("transcripts"))
