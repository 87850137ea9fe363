"""The distinctive words of an indexed output: what else an agent could search it for."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.rules import RuleSet
    from capy.store import Store

# Words as an agent would search them: identifiers with their dots, dashes and underscores kept
# (`test_parse_header`, `CVE-2024-3094`, `app.module.ts`), two to sixty characters.
_TOKEN = re.compile(r"[A-Za-z0-9][\w.-]{0,58}[A-Za-z0-9]")
# Hashes, UUIDs and long hex ids are unique in every chunk, yet nobody searches for them blind.
_HEX_ID = re.compile(r"(?i)(?=.*\d)[0-9a-f-]{7,}")
_DIGITS = re.compile(r"\d+")


def distinctive_terms(store: Store, source_id: int, rules: RuleSet, *, limit: int) -> list[str]:
    """The source's most telling words by tf-idf over its chunks, identifiers first, one per
    family of numbered names (`test_case_1`, `test_case_2`, ...)."""
    from capy.store import chunk_rowid_range

    chunks = [
        f"{title}\n{content}"
        for title, content in store.conn.execute(
            "SELECT title, content FROM chunks WHERE rowid BETWEEN ? AND ?",
            chunk_rowid_range(source_id),
        )
    ]
    search = rules.view("search")
    ignored = search.stopwords.all | search.entities.stopwords
    frequency: Counter[str] = Counter()
    spread: Counter[str] = Counter()
    spelling: dict[str, str] = {}
    for chunk in chunks:
        found = Counter(token.strip(".-") for token in _TOKEN.findall(chunk))
        for token, count in found.items():
            key = token.lower()
            if _worth_listing(token, key, ignored):
                frequency[key] += count
                spread[key] += 1
                spelling.setdefault(key, token)
    total = len(chunks)
    scored = []
    for key, count in frequency.items():
        rarity = math.log((1 + total) / spread[key])
        shape = 2.0 if search.entities.is_entity(spelling[key]) else 1.0
        scored.append((shape * rarity * math.log1p(count), key))
    scored.sort(key=lambda item: (-item[0], item[1]))
    terms, families = [], set()
    for score, key in scored:
        family = _DIGITS.sub("#", key)
        if score <= 0 or len(terms) >= limit or family in families:
            continue
        families.add(family)
        terms.append(spelling[key])
    return terms


def _worth_listing(token: str, key: str, ignored: frozenset[str]) -> bool:
    return (
        len(token) >= 3
        and key not in ignored
        and not token.replace(".", "").replace("-", "").isdigit()
        and not _HEX_ID.fullmatch(token)
    )
