"""Finding session transcripts on disk and parsing each with the parser for its format.

Where each agent keeps its transcripts comes from the platforms pack (`transcripts.glob`); a
`--source DIR` is searched for `*.jsonl` files instead and each file's format is told by its
first JSON line. Subagent sidecars are never sessions of their own: they ride with their parent.
"""

from __future__ import annotations

import glob
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capy.sessions.claude import SIDECAR_DIR, parse_claude, sidecar_files
from capy.sessions.codex import parse_codex
from capy.sessions.reader import UNPARSABLE_LINE, first_record

if TYPE_CHECKING:
    from capy.rules.views.platforms import PlatformsPack
    from capy.rules.views.transcripts import TranscriptsPack
    from capy.sessions.model import Session

CLAUDE_FORMAT = "claude-code-jsonl"
CODEX_FORMAT = "codex-rollout-jsonl"
# How far into a file to look for the working directory before giving up.
_CWD_PEEK_LINES = 50


@dataclass(frozen=True)
class SessionFile:
    path: Path
    format: str  # a platforms-pack transcripts.format
    platform: str  # the platforms-pack key of the agent that wrote it

    def related_files(self) -> list[Path]:
        """The transcript and the sidecars archived and indexed with it."""
        if self.format != CLAUDE_FORMAT:
            return [self.path]
        return [self.path, *sidecar_files(self.path)]


def discover_sessions(
    platforms: PlatformsPack, transcripts: TranscriptsPack, source: Path | None = None
) -> list[SessionFile]:
    """Every session file, sorted by path: the agents' own folders, or those under `source`."""
    platform_of = {
        item.transcripts.format: item.key for item in platforms.platforms if item.transcripts
    }
    found: dict[Path, SessionFile] = {}
    if source is None:
        for item in platforms.platforms:
            if item.transcripts is None:
                continue
            pattern = str(Path(item.transcripts.glob).expanduser())
            for name in glob.glob(pattern, recursive=True):
                path = Path(name)
                if path.is_file():
                    found[path] = SessionFile(path, item.transcripts.format, item.key)
        return sorted(found.values(), key=lambda item: str(item.path))
    for path in sorted(source.rglob("*.jsonl")):
        if SIDECAR_DIR in path.relative_to(source).parts[:-1] or not path.is_file():
            continue
        fmt = sniff_format(path, transcripts)
        found[path] = SessionFile(path, fmt, platform_of.get(fmt, fmt))
    return sorted(found.values(), key=lambda item: str(item.path))


def sniff_format(path: Path, transcripts: TranscriptsPack) -> str:
    """Codex rollouts wrap every line as {type, payload} with the pack's Codex line types."""
    record = first_record(path)
    wrapped = record is not None and isinstance(record.get("payload"), dict)
    if wrapped and str(record.get("type")) in transcripts.codex.line_types:
        return CODEX_FORMAT
    return CLAUDE_FORMAT


def parse_session(
    item: SessionFile, transcripts: TranscriptsPack, max_bytes: int | None = None
) -> Session:
    if item.format == CODEX_FORMAT:
        session = parse_codex(item.path, transcripts, max_bytes=max_bytes)
    else:
        session = parse_claude(item.path, transcripts, max_bytes=max_bytes)
    session.platform = item.platform
    return session


def peek_cwd(path: Path) -> str | None:
    """The session's working directory from its first lines, without parsing the whole file."""
    try:
        with path.open("rb") as handle:
            for _, line in zip(range(_CWD_PEEK_LINES), handle, strict=False):
                cwd = _cwd_of(line)
                if cwd:
                    return cwd
    except OSError:
        return None
    return None


def _cwd_of(line: bytes) -> str | None:
    try:
        record: Any = json.loads(line)
    except UNPARSABLE_LINE:
        return None
    if not isinstance(record, dict):
        return None
    payload = record.get("payload")
    for holder in (record, payload if isinstance(payload, dict) else {}):
        if isinstance(holder.get("cwd"), str) and holder["cwd"]:
            return holder["cwd"]
    return None
