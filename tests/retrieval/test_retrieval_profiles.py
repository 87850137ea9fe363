"""Ranking profiles: a chunk's content type picks its boost weights from the search pack."""

from __future__ import annotations

from capy.retrieval import SearchFilters, search
from capy.rules.views.base import with_fields
from capy.rules.views.search import BoostWeights, Profile

TEXT = "Set REFRESH_SKEW_MS before the token refresh; the skew keeps clocks apart.\n"


def _with_prose_profile(pack, **weights):
    profile = Profile(
        id="search.profile-test",
        status="active",
        since="0.1.0",
        description="plain text without the identifier boost",
        content_types=("plaintext",),
        boosts=BoostWeights(**weights),
    )
    return with_fields(pack, profiles=(profile,))


def test_boosts_for_a_content_type(search_rules) -> None:
    pack = _with_prose_profile(search_rules, entity=0.0, phrase=0.9)
    prose = pack.boosts_for("plaintext")
    assert (prose.entity, prose.phrase.weight) == (0.0, 0.9)
    assert prose.phrase.gap_chars == search_rules.boosts.phrase.gap_chars
    assert prose.proximity == search_rules.boosts.proximity  # not named: kept
    assert pack.boosts_for("code") == search_rules.boosts
    assert pack.boosts_for("") == search_rules.boosts  # a corpus that records no type
    retired = with_fields(pack.profiles[0], status="disabled")
    assert with_fields(pack, profiles=(retired,)).boosts_for("plaintext") == search_rules.boosts


def test_candidates_rank_by_their_content_type(store, index, corpus, search_rules) -> None:
    index("notes.txt", TEXT, content_type="plaintext")
    index("skew.log", TEXT, content_type="log")
    query = "REFRESH_SKEW_MS token"
    shipped = search(corpus, query, rules=search_rules, filters=SearchFilters())
    scores = {hit.source_label: hit.score for hit in shipped.hits}
    assert scores["notes.txt"] == scores["skew.log"]  # the same text ranks the same
    profiled = search(
        corpus, query, rules=_with_prose_profile(search_rules, entity=0.0), filters=SearchFilters()
    )
    assert [hit.source_label for hit in profiled.hits] == ["skew.log", "notes.txt"]
    moved = {hit.source_label: hit.score for hit in profiled.hits}
    assert moved["skew.log"] == scores["skew.log"]
    assert moved["notes.txt"] < scores["notes.txt"]
