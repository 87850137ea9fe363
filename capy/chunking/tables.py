"""CSV: batches of rows with the header row repeated, so every chunk reads on its own and column
names sit next to their values. Rows are lines: a quoted field spanning lines may be cut between
two chunks (its text is kept, in order)."""

from __future__ import annotations

from capy.chunking.pieces import Piece, nbytes, window_pieces
from capy.rules.views.chunking import ChunkingPack


def chunk_csv(text: str, label: str, rules: ChunkingPack) -> list[Piece]:
    lines = text.split("\n")
    header, rows = lines[0], lines[1:]
    config = rules.csv
    # A header too large to repeat next to a useful number of rows is kept once, at the top.
    repeat = config.repeat_header and nbytes(header) * 2 <= rules.max_chunk_bytes
    room = rules.max_chunk_bytes - (nbytes(header) + 1 if repeat else 0)
    batches = window_pieces(
        rows, first_line=2, window=config.rows_per_chunk, overlap=0, rules=rules, max_bytes=room
    )
    if not batches:
        return [Piece(None, header, (1, 1))]
    pieces: list[Piece] = []
    if not repeat:
        pieces.append(Piece(None, header, (1, 1)))
    for batch in batches:
        content = f"{header}\n{batch.content}" if repeat else batch.content
        pieces.append(Piece(None, content, batch.span))
    return pieces
