"""Property tests: no query text can make search raise; an indexed unique token is found."""

from __future__ import annotations

import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capy.retrieval import search
from capy.retrieval.query import parse_query

_SHARED = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
_FTS_NOISE = st.sampled_from(
    [
        '"',
        "'",
        "(",
        ")",
        "*",
        ":",
        "^",
        "~",
        "AND",
        "OR",
        "NOT",
        "NEAR",
        "NEAR(",
        "-",
        "+",
        "{",
        "}",
    ]
)
_QUERIES = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(_FTS_NOISE, st.text(max_size=12)), max_size=40).map(" ".join),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1000, max_size=5000),
    st.binary(max_size=200).map(lambda raw: raw.decode("utf-8", "surrogateescape")),
)


@_SHARED
@given(query=_QUERIES)
def test_any_query_is_safe(corpus, put, search_rules, query):
    if not corpus.store.conn.execute("SELECT 1 FROM sources").fetchone():
        put("doc", [("Title", "some content with words, emoji 🎉 and ünïcödé"), ("T2", "more")])
    result = search(corpus, query, rules=search_rules, limit=5)
    assert len(result.hits) <= 5
    parsed = parse_query(query, search_rules)
    assert len(parsed.terms) <= search_rules.query.max_terms


_TOKEN = st.text(alphabet=string.ascii_lowercase, min_size=8, max_size=16).map(lambda t: f"zq{t}")
_FILLER = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "log", "line"]), max_size=50)


@_SHARED
@given(token=_TOKEN, before=_FILLER, after=_FILLER)
def test_indexed_unique_token_is_found(store, index, rules, token, before, after):
    from capy.store.corpus import search_store

    label = f"doc-{token}"
    index(label, " ".join([*before, token, *after]) or token)
    (result,) = search_store(store, [token], rules=rules)
    assert result.hits
    assert result.hits[0].source_label == label
    assert token in result.hits[0].content
