"""The matcher's Porter stemmer against FTS5's own porter tokenizer, on the words of real outputs.

Line selection, snippets and the relevance floor find a hit's terms with this stemmer; if it
folded a word differently from the porter table, a chunk the table matched for that word would
show no line for it. SQLite's FTS5 is the reference: every word is stemmed by a real porter
table (read back through fts5vocab) and by `porter_stem`, and the two must agree.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from capy.retrieval.porter import porter_stem

OUTPUTS = Path(__file__).parents[2] / "fixtures" / "niah-real" / "outputs"
_WORD = re.compile(r"[a-z]+")


def _words() -> list[str]:
    words: set[str] = set()
    for path in sorted(OUTPUTS.iterdir()):
        words.update(_WORD.findall(path.read_text("utf-8", errors="ignore").lower()))
    return sorted(words)


def _fts5_stems(words: list[str]) -> dict[str, str]:
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE VIRTUAL TABLE t USING fts5(w, tokenize='porter unicode61')")
    except sqlite3.OperationalError as error:  # pragma: no cover - depends on the build
        pytest.skip(f"this sqlite3 has no FTS5 ({error})")
    db.executemany("INSERT INTO t(rowid, w) VALUES (?, ?)", enumerate(words, 1))
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    return {words[doc - 1]: term for term, doc in db.execute("SELECT term, doc FROM v")}


def test_porter_stem_agrees_with_fts5_on_every_word_of_the_real_outputs():
    words = _words()
    assert len(words) > 10_000  # the real outputs, not an empty folder
    reference = _fts5_stems(words)
    differ = [(w, reference[w], porter_stem(w)) for w in words if porter_stem(w) != reference[w]]
    assert differ == []


def test_a_stem_less_its_last_letter_starts_its_word():
    """The matcher's scanner finds candidate words by that prefix before stemming them."""
    assert [w for w in _words() if not w.startswith(porter_stem(w)[:-1])] == []


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("merged", "merg"),
        ("merge", "merg"),
        ("branches", "branch"),
        ("complexity", "complex"),
        ("requirements", "requir"),
        ("requires", "requir"),
        ("timing", "time"),
        ("ies", "ie"),  # FTS5 takes an ending only when something comes before it
        ("eed", "e"),
    ],
)
def test_porter_stem_folds_derivations_the_old_light_stem_missed(word, expected):
    assert porter_stem(word) == expected
