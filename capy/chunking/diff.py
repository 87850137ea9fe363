"""Unified diffs and git patches: one chunk per changed file, or per hunk, titled by the path.

Hunk bodies are measured by the line counts in their `@@ -a,b +c,d @@` header, so a removed SQL
comment (`--- old`) inside a hunk is never mistaken for the next file's header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from capy.chunking.pieces import Piece, line_windows, nbytes, split_long_line
from capy.chunking.text import chunk_plaintext
from capy.rules.views.chunking import ChunkingPack

_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@(.*)$")
_GIT_PATH = re.compile(r"^diff --git (?:\"?a/)?.*? (?:\"?b/)?(.+?)\"?$")


@dataclass
class _File:
    header: list[str] = field(default_factory=list)
    hunks: list[list[str]] = field(default_factory=list)
    first_line: int = 1


def chunk_diff(text: str, label: str, rules: ChunkingPack) -> list[Piece]:
    lines = text.split("\n")
    preamble, files = _parse(lines)
    pieces = chunk_plaintext("\n".join(preamble), label, rules) if preamble else []
    for diff_file in files:
        pieces.extend(_file_pieces(diff_file, rules))
    return pieces


def _parse(lines: list[str]) -> tuple[list[str], list[_File]]:
    preamble: list[str] = []
    files: list[_File] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        starts_file = line.startswith("diff --git ") or (
            line.startswith("--- ")
            and index + 1 < len(lines)
            and lines[index + 1].startswith("+++ ")
            and not (files and files[-1].header and not files[-1].hunks)
        )
        hunk = _HUNK.match(line)
        if starts_file:
            files.append(_File(first_line=index + 1))
        if hunk and files:
            index = _read_hunk(lines, index, hunk, files[-1])
            continue
        (files[-1].header if files else preamble).append(line)
        index += 1
    return preamble, files


def _read_hunk(lines: list[str], index: int, hunk: re.Match[str], target: _File) -> int:
    """Consume one hunk by its line counts; a malformed count reads up to the next header."""
    old = int(hunk.group(1)) if hunk.group(1) is not None else 1
    new = int(hunk.group(2)) if hunk.group(2) is not None else 1
    body = [lines[index]]
    index += 1
    while index < len(lines) and (old > 0 or new > 0 or lines[index].startswith("\\")):
        line = lines[index]
        marker = line[:1]
        if marker == "-":
            old -= 1
        elif marker == "+":
            new -= 1
        elif marker in (" ", ""):
            old, new = old - 1, new - 1
        elif marker != "\\":
            break
        body.append(line)
        index += 1
    target.hunks.append(body)
    return index


def _path(diff_file: _File) -> str | None:
    new = next((line[4:] for line in diff_file.header if line.startswith("+++ ")), None)
    old = next((line[4:] for line in diff_file.header if line.startswith("--- ")), None)
    for candidate in (new, old):
        if candidate and candidate.split("\t")[0].strip() != "/dev/null":
            name = candidate.split("\t")[0].strip()
            return name[2:] if name[:2] in ("a/", "b/") else name
    git = _GIT_PATH.match(diff_file.header[0]) if diff_file.header else None
    return git.group(1) if git else None


def _file_pieces(diff_file: _File, rules: ChunkingPack) -> list[Piece]:
    path = _path(diff_file)
    span = (diff_file.first_line, diff_file.first_line)
    whole = "\n".join(diff_file.header + [line for hunk in diff_file.hunks for line in hunk])
    if rules.diff.chunk_per == "file" and nbytes(whole) <= rules.max_chunk_bytes:
        return [Piece(path, whole, span)]
    header = "\n".join(diff_file.header)
    parts = [part for hunk in diff_file.hunks for part in _hunk_parts(hunk, header, rules)]
    pieces: list[Piece] = []
    current: list[str] = []
    for part in parts:
        full = rules.diff.chunk_per == "hunk" or (
            nbytes("\n".join([*current, part])) > rules.max_chunk_bytes
        )
        if current and full:
            pieces.append(_titled(path, current, span))
            current = []
        if not current and header and (rules.diff.repeat_file_header or not pieces):
            current.append(header)
        current.append(part)
    if current or not pieces:
        pieces.append(_titled(path, current or [header], span))
    return pieces


def _titled(path: str | None, parts: list[str], span: tuple[int, int]) -> Piece:
    content = "\n".join(parts)
    hunk = next((m for m in map(_HUNK.match, content.split("\n")) if m), None)
    context = hunk.group(3).strip() if hunk else ""
    title = f"{path} > {context}" if path and context else path
    return Piece(title, content, span)


def _hunk_parts(hunk: list[str], header: str, rules: ChunkingPack) -> list[str]:
    """The hunk whole, or cut at line boundaries with its @@ line repeated on every part."""
    text = "\n".join(hunk)
    room = rules.max_chunk_bytes - (nbytes(header) + 1 if header else 0)
    if nbytes(text) <= room:
        return [text]
    head, body = hunk[0], hunk[1:]
    budget = room - nbytes(head) - 1
    if budget < rules.min_chunk_bytes:  # a giant header: cut the hunk as plain lines
        head, body, budget = "", hunk, rules.max_chunk_bytes
    parts: list[str] = []
    ratio = rules.plaintext.whitespace_break_ratio
    for start, end in line_windows(body, len(body), 0, budget):
        chunk = ["\n".join(body[start:end])]
        if end - start == 1:
            chunk = split_long_line(chunk[0], budget, ratio)
        parts.extend(f"{head}\n{piece}" if head else piece for piece in chunk)
    return parts
