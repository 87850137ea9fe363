"""Sections of the output as printed, for output the index holds converted (HTML).

An intent reply quotes the output's own lines, read back from the stored (redacted) text;
the search hits are the lines' chunks. HTML is the exception: the chunking pack converts a page
to markdown before chunking, so its chunks are not lines of what the program printed, and a
page laid out in tables converts to a few lines of thousands of bytes each, which the reply
could only show as byte windows around the first match. For such output the reply's sections
are blocks of the printed lines instead, about a chunk long, ranked by the same measure the
relevance floor uses (the rarity-weighted share of the intent's terms a block holds); the
judgement of whether anything matched still rests on the search over the converted page.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.retrieval import SearchResult
    from capy.rules import RuleSet


def printed_result(
    stored: str, result: SearchResult, intent: str, label: str, rules: RuleSet
) -> SearchResult:
    """`result` with its hits replaced by the best blocks of `stored`'s lines, best first, as
    many as it had; blocks holding none of the intent's terms are left out."""
    from capy.api.intent_relevance import hit_term_shares

    if not result.hits:
        return result
    blocks = _blocks(stored, rules.view("chunking").max_chunk_bytes)
    texts = [text for _, _, text in blocks]
    scores = [sum(row) for row in hit_term_shares(texts, texts, intent, rules)]
    order = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], i))
    template = result.hits[0]
    hits = tuple(
        replace(
            template,
            title=f"{label} (lines {blocks[i][0]}-{blocks[i][1]})",
            content=blocks[i][2],
            snippet="",
            score=scores[i],
        )
        for i in order[: len(result.hits)]
    )
    return replace(result, hits=hits) if hits else result


def _blocks(text: str, size: int) -> list[tuple[int, int, str]]:
    """(first line, last line, text) of consecutive runs of lines up to `size` bytes each (a
    longer line is a block of its own), numbered from 1."""
    blocks: list[tuple[int, int, str]] = []
    lines = text.split("\n")
    start, used = 0, 0
    for number, line in enumerate(lines):
        cost = len(line.encode("utf-8")) + 1
        if number > start and used + cost > size:
            blocks.append((start + 1, number, "\n".join(lines[start:number])))
            start, used = number, 0
        used += cost
    if start < len(lines):
        blocks.append((start + 1, len(lines), "\n".join(lines[start:])))
    return blocks
