"""The cheap paths a search takes on a large store: the bm25 window, the OR and trigram skips,
the work budget of passes that can only add, and the definition boost that ranks where a name
is declared above where it is used."""

from __future__ import annotations

import pytest

from capy.retrieval import SearchFilters, search
from capy.retrieval.definitions import definition_boost, wanted_names
from capy.retrieval.query import parse_query
from capy.store.corpus import StoreCorpus, search_store


def one(store, query, rules, **options):
    (result,) = search_store(store, [query], rules=rules, **options)
    return result


def with_search(rules, section: str, **values):
    """The shipped rules with some search settings changed (the pack itself stays as shipped)."""
    pack = rules.view("search")
    changed = pack.model_copy(update={section: getattr(pack, section).model_copy(update=values)})
    return _Rules(rules, changed)


class _Rules:
    def __init__(self, rules, search_pack) -> None:
        self._rules, self._search = rules, search_pack

    def view(self, name: str):
        return self._search if name == "search" else self._rules.view(name)

    def __getattr__(self, name: str):
        return getattr(self._rules, name)


def test_bm25_window_ranks_only_the_newest_matches(store, put, rules):
    older = put("old.log", [("old", "deploy failed on the runner")] * 3)
    newer = put("new.log", [("new", "deploy failed again")] * 3)
    bm25 = rules.view("search").bm25
    everything = StoreCorpus(store, default_kinds=("durable",), bm25=bm25)
    assert {c.source_id for c in everything.match("porter", '"deploy"', 10, SearchFilters())} == {
        older,
        newer,
    }
    windowed = StoreCorpus(
        store, default_kinds=("durable",), bm25=bm25.model_copy(update={"rank_window": 3})
    )
    found = windowed.match("porter", '"deploy"', 10, SearchFilters())
    assert [c.source_id for c in found] == [newer] * 3


def test_bm25_window_counts_only_sources_in_scope(store, put, rules):
    kept = put("kept.log", [("kept", "deploy failed")] * 2)
    put("other.log", [("other", "deploy failed")] * 5)
    bm25 = rules.view("search").bm25.model_copy(update={"rank_window": 2})
    corpus = StoreCorpus(store, default_kinds=("durable",), bm25=bm25)
    found = corpus.match("porter", '"deploy"', 10, SearchFilters(source="kept.log"))
    assert [c.source_id for c in found] == [kept, kept]


class RecordingCorpus(StoreCorpus):
    """The real corpus, noting which FTS5 queries the core sent it."""

    def __init__(self, *args, **options) -> None:
        super().__init__(*args, **options)
        self.queries: list[tuple[str, str]] = []
        self.calls: list[tuple[str, str, int | None]] = []  # layer, query, budget's limit
        self.spent: list[int | None] = []  # the steps each call counted (None: not counted)

    def match(self, layer, fts_query, limit, filters, *, budget=None, any_of=()):
        self.queries.append((layer, fts_query))
        self.calls.append((layer, fts_query, budget.limit if budget else None))
        found = super().match(layer, fts_query, limit, filters, budget=budget, any_of=any_of)
        self.spent.append(budget.spent if budget else None)
        return found


def recording(store, rules) -> RecordingCorpus:
    return RecordingCorpus(store, default_kinds=("durable",), bm25=rules.view("search").bm25)


def test_or_pass_is_skipped_once_and_fills_every_slot(store, put, rules):
    put("a.md", [(f"both {n}", "writer queue") for n in range(30)])
    put("b.md", [("only one", "writer alone")])
    corpus = recording(store, rules)
    result = search(corpus, "writer queue", rules=rules.view("search"), limit=10)
    assert len(result.hits) == 10
    # AND filled every candidate slot, so no OR query ran and no trigram list was needed.
    assert corpus.queries == [("porter", '"writer" AND "queue"')]


def test_or_pass_runs_when_and_is_short(store, put, rules):
    put("a.md", [("both", "writer queue"), ("one", "writer alone")])
    corpus = recording(store, rules)
    result = search(corpus, "writer queue", rules=rules.view("search"), limit=10)
    assert [hit.title for hit in result.hits] == ["both", "one"]
    assert ("porter", '"writer" OR "queue"') in corpus.queries


@pytest.mark.parametrize(("below", "layers"), [(1, {"porter"}), (100, {"rrf"})])
def test_trigram_list_runs_only_when_porter_is_short(store, put, rules, below, layers):
    put("wal.go", [("Breaker", "The circuit breaker resets after the timeout expires.")])
    changed = with_search(rules, "query", trigram_when_porter_below=below)
    assert {hit.layer for hit in one(store, "breaker", changed).hits} == layers


def test_substring_search_still_uses_trigram_when_porter_finds_nothing(store, put, rules):
    put("wal.go", [("Errors", 'ErrCorruptRecord = errors.New("corrupt")')])
    changed = with_search(rules, "query", trigram_when_porter_below=1)
    assert [hit.layer for hit in one(store, "CorruptRec", changed).hits] == ["trigram"]


CODE = [
    ("needsRefresh", "return session.expiresAt - REFRESH_SKEW_MS <= now;"),
    ("constants", "export const REFRESH_SKEW_MS = 30_000;\nexport const STORAGE_KEY = 'x';"),
    ("RetryPolicy", "max_attempts: int = DEFAULT_MAX_ATTEMPTS\nbase: float = 0.5"),
    ("defaults", "DEFAULT_MAX_ATTEMPTS = 4\nDEFAULT_BASE_DELAY = 0.5"),
    ("Options", "this.segmentSize = opts.size ?? DefaultSegmentSize;"),
    ("wal", "const (\n\tDefaultSegmentSize = 64 << 20\n)"),
    ("storage", "/** Where the session lives in storage. */\nexport const STORAGE_KEY = 'ph.s';"),
    ("SessionStore > save", "this.session = session;\nthis.storage.setItem(STORAGE_KEY, s);"),
]


@pytest.mark.parametrize(
    ("query", "definition"),
    [
        ("REFRESH_SKEW_MS", "constants"),
        ("default max attempts", "defaults"),
        ("segment size default", "wal"),  # any word order
        # The declaration wins over a use holding the same words closer together.
        ("STORAGE_KEY session storage key", "storage"),
    ],
)
def test_definition_ranks_above_uses(store, put, rules, query, definition):
    put("src", CODE)
    assert one(store, query, rules, limit=5).hits[0].title == definition


def test_definition_boost_scales_with_the_terms_the_name_covers(search_rules):
    rule = search_rules.boosts.definition

    def boost_for(query: str, content: str) -> float:
        terms = parse_query(query, search_rules).terms
        return definition_boost(content, wanted_names(terms, search_rules.entities), rule)

    assert boost_for("max parcels per shipment", "const MAX_PARCELS_PER_SHIPMENT = 50;") == (
        pytest.approx(rule.weight)
    )
    assert boost_for("default max attempts", "max_attempts: int = 3") == pytest.approx(
        rule.weight * 2 / 3
    )
    # A name the query spells out is what it asks for, whatever words come with it; another
    # name made of some of its words counts for those words only.
    storage = "export const STORAGE_KEY = 'ph.session.v2';"
    assert boost_for("STORAGE_KEY session storage key", storage) == pytest.approx(rule.weight)
    assert boost_for("STORAGE_KEY session", storage) == pytest.approx(rule.weight)
    assert boost_for("STORAGE_KEY session storage key", "const SESSION_STORAGE = {};") == (
        pytest.approx(rule.weight * 2 / 4)
    )
    # A longer unrelated word in the name, a comparison, prose, or one plain word: no boost.
    assert boost_for("max attempts", "MAX_RETRY_ATTEMPTS = 3") == 0.0
    assert boost_for("max attempts", "if max_attempts == 3:") == 0.0
    assert boost_for("ENHANCE_YOUR_CALM", "an error of type ENHANCE_YOUR_CALM") == 0.0
    assert boost_for("attempts", "attempts = 3") == 0.0


def test_trigram_finds_a_word_inside_an_identifier_without_a_budget(store, put, rules):
    put("wal.go", [("Options", "w := bufio.NewWriterSize(f, 1<<16)")])
    put("notes.md", [("notes", "the writer flushes on close")])
    corpus = recording(store, rules)
    result = search(corpus, "WriterSize", rules=rules.view("search"), limit=5)
    # "writersize" is no word of its own (only inside "newwritersize"): the trigram list is the
    # way to it, so it runs whole.
    assert [hit.title for hit in result.hits] == ["Options"]
    assert ("trigram", '"WriterSize"', None) in corpus.calls


def test_trigram_of_known_words_runs_within_the_budget(store, put, rules):
    put("notes.md", [("one", "the writer flushes segments"), ("two", "a writer rotates logs")])
    corpus = recording(store, rules)
    search(corpus, "writer segments", rules=rules.view("search"), limit=5)
    budget = rules.view("search").query.optional_pass_budget_steps
    assert ("trigram", '"writer" AND "segments"', budget) in corpus.calls


def test_trigram_of_known_words_is_skipped_once_porter_fills_what_is_shown(store, put, rules):
    put("notes.md", [("one", "the writer flushes segments"), ("two", "a writer rotates logs")])
    corpus = recording(store, rules)
    search(corpus, "writer segments", rules=rules.view("search"), limit=1)
    assert not [call for call in corpus.calls if call[0] == "trigram"]
    # Without the setting the budgeted pass runs as before.
    always = with_search(rules, "query", skip_optional_when_shown=False)
    corpus = recording(store, always)
    search(corpus, "writer segments", rules=always.view("search"), limit=1)
    budget = rules.view("search").query.optional_pass_budget_steps
    assert ("trigram", '"writer" AND "segments"', budget) in corpus.calls


def test_or_pass_is_skipped_when_and_fills_the_shown_slots_across_sources(store, put, rules):
    put("a.md", [("a1", "writer queue"), ("a2", "writer queue drains")])
    put("b.md", [("b1", "writer queue stalls"), ("b2", "writer alone")])
    corpus = recording(store, rules)
    result = search(corpus, "writer queue", rules=rules.view("search"), limit=3)
    assert sorted(hit.title for hit in result.hits) == ["a1", "a2", "b1"]
    assert not [query for layer, query in corpus.queries if " OR " in query]


def test_or_pass_still_runs_when_one_source_holds_every_and_hit(store, put, rules):
    # At most two results per source come before other sources' (diversity): a third slot is
    # open to an OR hit from elsewhere, so the OR pass still runs.
    put("a.md", [(f"a{n}", "writer queue") for n in range(3)])
    put("b.md", [("b1", "writer alone")])
    corpus = recording(store, rules)
    result = search(corpus, "writer queue", rules=rules.view("search"), limit=3)
    assert [hit.title for hit in result.hits][2] == "b1"
    assert ("porter", '"writer" OR "queue"') in corpus.queries


def test_trigram_of_known_words_is_not_started_once_porter_used_the_budget(store, put, rules):
    put("notes.md", [("one", "the writer flushes segments"), ("two", "a writer rotates logs")])
    put("wal.go", [("Options", "w := bufio.NewWriterSize(f, 1<<16)")])
    # Any porter pass uses all of a budget of no steps; the trigram list of the same words would
    # cost more still, so it could only be cut short.
    tight = with_search(rules, "query", optional_pass_budget_steps=0)
    corpus = recording(store, tight)
    search(corpus, "writer segments", rules=tight.view("search"), limit=5)
    assert corpus.calls[0][0] == "porter"
    assert not [call for call in corpus.calls if call[0] == "trigram"]
    # A word found only inside longer ones still needs the trigram list, budget or not.
    corpus = recording(store, tight)
    search(corpus, "WriterSize", rules=tight.view("search"), limit=5)
    assert ("trigram", '"WriterSize"', None) in corpus.calls


def test_no_budget_runs_every_optional_pass_whole(store, put, rules):
    """The pack may say no budget at all (None): the trigram list of known words then runs
    uncut, instead of the comparison with a missing budget failing."""
    put("notes.md", [("one", "the writer flushes segments"), ("two", "a writer rotates logs")])
    unlimited = with_search(rules, "query", optional_pass_budget_steps=None)
    corpus = recording(store, unlimited)
    result = search(corpus, "writer segments", rules=unlimited.view("search"), limit=5)
    assert [hit.title for hit in result.hits][:1] == ["one"]
    assert ("trigram", '"writer" AND "segments"', None) in corpus.calls


def test_a_declaration_broken_across_lines_is_still_found(search_rules):
    rule = search_rules.boosts.definition
    terms = parse_query("default max attempts", search_rules).terms
    wanted = wanted_names(terms, search_rules.entities)
    filler = "\n".join(f"log.info('step {n}')" for n in range(50))
    split = f"{filler}\nexport const\n  DEFAULT_MAX_ATTEMPTS = 4;\n{filler}"
    assert definition_boost(split, wanted, rule) == pytest.approx(rule.weight)
    assigned = f"{filler}\nDEFAULT_MAX_ATTEMPTS\n    = 4\n{filler}"
    assert definition_boost(assigned, wanted, rule) == pytest.approx(rule.weight)


def test_prose_spelling_the_query_words_is_no_declaration(search_rules):
    # The templates scan only around a token holding two query words (or an identifier):
    # prose, a word per token, is passed over; the camelCase name inside it is found.
    rule = search_rules.boosts.definition
    terms = parse_query("segment size default", search_rules).terms
    wanted = wanted_names(terms, search_rules.entities)
    prose = "\n".join("segment = the default size of a segment" for _ in range(40))
    assert definition_boost(prose, wanted, rule) == 0.0
    declared = f"{prose}\nvar DefaultSegmentSize = 64 << 20\n{prose}"
    assert definition_boost(declared, wanted, rule) == pytest.approx(rule.weight)


def test_an_and_with_a_word_found_nowhere_skips_the_trigram_list(store, put, rules):
    put("notes.md", [("one", "the writer flushes segments")])
    corpus = recording(store, rules)
    search(corpus, "writer qzxvbnm", rules=rules.view("search"), limit=5)
    assert not [call for call in corpus.calls if call[0] == "trigram" and " AND " in call[1]]


def test_a_query_past_its_budget_returns_nothing_and_the_connection_stays_usable(store):
    from capy.retrieval.model import WorkBudget
    from capy.store.budget import fetch_within

    endless = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
        "SELECT count(*) FROM n WHERE i < 0"
    )
    assert fetch_within(store.conn, endless, (), WorkBudget(20_000)) is None
    assert fetch_within(store.conn, "SELECT 1", (), WorkBudget(20_000)) == [(1,)]
    assert fetch_within(store.conn, "SELECT 2", (), None) == [(2,)]
