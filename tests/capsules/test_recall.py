"""Recall over a real capsule log: drafts written, the pipeline drained, then recalled."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capy.capsules import CapsuleDraft, CapsuleError, Scope
from capy.capsules.pipeline import drain
from capy.capsules.recall import RecallItem, recall, recall_brief
from capy.capsules.recall.brief import estimate_tokens, render_brief
from capy.capsules.recall.ranking import Ranked, below_floor
from capy.rules import load_rules

SESSION = "sess-recall-1"
EVENTS = [
    ("prompt", "The nightly import job keeps failing on the orders table, please look into it."),
    (
        "error",
        "pytest tests/test_import.py failed: sqlite3.OperationalError: database is locked "
        "while importing orders",
    ),
    (
        "decision",
        "Retry the import on a busy database with backoff instead of failing at once; "
        "a second writer is expected at night.",
    ),
    ("diff", "capy/importer.py: wrap write_orders() in retry_busy() with 5 attempts"),
    ("response", "The import now retries when the database is locked; the tests pass."),
    ("note", "The staging server's disk fills up every Friday: the log rotation is weekly."),
    ("note", "The staging server's disk fills up every Friday: the log rotation is weekly!"),
    ("prompt", "Rename the colour palette module to theme and update its imports."),
]


@pytest.fixture
def recalled(capsules):
    drafts = [
        _draft(kind, text, SESSION, f"2026-05-0{1 + index // 4}T10:{index:02d}:00Z")
        for index, (kind, text) in enumerate(EVENTS)
    ]
    capsules.write(drafts)
    drain(capsules)
    return capsules


def _draft(kind: str, text: str, session: str | None, created_at: str) -> CapsuleDraft:
    metadata = {"session_id": session} if session else {}
    return CapsuleDraft(
        kind=kind, content=text, source="cli", metadata=metadata, created_at=created_at
    )


def _write_session(capsules, session: str, events: list[tuple[str, str]]) -> None:
    """`events` (kind, text) as one session, a minute apart, with their pipeline drained."""
    capsules.write(
        [
            _draft(kind, text, session, f"2026-05-01T10:{i:02d}:00Z")
            for i, (kind, text) in enumerate(events)
        ]
    )
    drain(capsules)


def test_recall_ranks_the_capsules_that_answer(recalled):
    result = recall(recalled, "why was the orders import failing with database locked")
    kinds = [item.kind for item in result.items[:3]]
    assert "error" in kinds
    top = result.items[0]
    assert top.session_id == SESSION and len(top.capsule_id) == 64
    assert "lexical" in top.lists


def test_each_item_in_the_brief_names_capsule_kind_time_and_session(recalled):
    result = recall(recalled, "import retry database locked", budget_tokens=1500)
    first = result.items[0]
    assert f"`{first.capsule_id[:12]}` · {first.kind} · {first.created_at[:10]}" in result.brief
    assert f"session `{SESSION}`" in result.brief
    assert result.tokens <= 1500


def test_a_question_about_what_i_asked_ranks_my_prompts_on_their_own(recalled):
    result = recall(recalled, "what did I ask about the orders import")
    assert result.items[0].kind == "prompt"
    assert "speaker" in result.items[0].lists
    # A question naming no speaker, or kinds that leave out prompts, has no speaker list.
    assert not any("speaker" in item.lists for item in recall(recalled, "orders import").items)
    narrowed = recall(recalled, "what did I ask about the orders import", kinds=["error"])
    assert not any("speaker" in item.lists for item in narrowed.items)


def test_the_words_naming_a_speaker_do_not_count_against_a_questions_coverage(recalled):
    from capy.capsules.recall.lists import without_speaker

    rules = recalled.rules.view("capsules").recall
    rest = "the weekly rotation into layers, stages, phases, tiers, levels and steps?"
    asked = f"How did the assistant break down {rest}"
    said = " ".join(without_speaker(asked, rules).split())
    assert said == f"How did the down {rest}"
    said = " ".join(without_speaker("what did I report about the import", rules).split())
    assert said == "what about the import"
    # "assistant" and "break" are in no capsule; judged on the rest, the note is relevant.
    assert recall(recalled, asked).items[0].kind == "note"


def test_the_context_list_ranks_first_what_lies_between_good_hits(recalled):
    from capy.capsules.recall import _settings, _where
    from capy.capsules.recall.lists import context_lists

    numbers = [n for n, _ in recalled.backend.scan()]
    where = _where(recalled, "project", None, None, None)
    first, sixth = numbers[0], numbers[5]
    order, _ = context_lists(recalled.conn, [first, sixth], where, _settings(recalled))
    # The third and fourth events are within reach of both hits: they outrank the second,
    # which only the first hit is near (listed hit by hit, the second came first).
    assert order[:3] == [numbers[2], numbers[3], numbers[1]]


def test_the_capsule_after_one_that_asks_is_its_answer(capsules):
    from capy.capsules.recall import _settings, _where
    from capy.capsules.recall.lists import context_lists

    turns = [
        ("prompt", "Here is the agency I found for the adoption."),
        ("response", "It looks great, and the people there seem kind."),
        ("prompt", "That agency looks great! What made you pick it?"),
        ("response", "They help LGBTQ+ folks adopt; their inclusivity spoke to me."),
        ("prompt", "Sounds like a good fit."),
    ]
    _write_session(capsules, "talk", turns)
    numbers = [n for n, _ in capsules.backend.scan()]
    where = _where(capsules, "project", None, None, None)
    order, answers = context_lists(capsules.conn, [numbers[2]], where, _settings(capsules))
    # The question's words are in the turn that asked; the reply after it holds the reason.
    # Without the rule the nearest earlier turn came first.
    assert order[0] == numbers[3] and answers == [numbers[3]]
    answer = capsules.backend.by_number([numbers[3]])[numbers[3]].id
    items = recall(capsules, "What made her pick it?").items
    assert answer in [item.capsule_id for item in items[:2]]
    # The answer list ranks the reply on its own, at the rank of the turn that asked.
    assert "answer" in next(item.lists for item in items if item.capsule_id == answer)


def test_a_question_asking_when_ranks_the_capsule_that_says_when(capsules):
    turns = [
        "I went to the adoption council meeting, so many people wanted to help.",
        "The adoption council meeting sounds inspiring, tell me more.",
        "Last Friday I went to the adoption council meeting and met a mentor.",
        "Adoption council meetings are held in the town hall.",
    ]
    _write_session(capsules, "talk", [("note", text) for text in turns])
    when = recall(capsules, "When did she go to the adoption council meeting?").items
    assert when[0].text.startswith("Last Friday") and "dated" in when[0].lists
    # A question that does not ask when has no dated list.
    what = recall(capsules, "What happened at the adoption council meeting?").items
    assert not any("dated" in item.lists for item in what)


def test_a_question_asking_what_came_of_an_event_ranks_what_followed_it(capsules):
    events = [
        ("prompt", "Please run the nightly job by hand tonight."),
        ("error", "import_orders.py: sqlite3.OperationalError: database is locked"),
        ("tool_call", "$ kill 4242  # stop the stale backup process holding the file"),
        ("response", "Tonight's run is done and the dashboard shows fresh numbers."),
    ]
    _write_session(capsules, "night", events)
    # The question's words name the failure; what sorted it out shares none of them. The
    # context list reaches both ways, and ranked the prompt before the failure first.
    items = recall(capsules, "The orders import hit a locked database; what sorted that out?").items
    # (The semantic layer's vector list, where installed, moves the others around it.)
    order = [item.text.split()[0] for item in items]
    assert order.index("$") < 2 and order.index("$") < order.index("Please")
    assert "followed" in next(item.lists for item in items if item.text.startswith("$ kill"))
    # A question that does not ask what came of an event has no followed list.
    other = recall(capsules, "Why did the orders import hit a locked database?").items
    assert not any("followed" in item.lists for item in other)


def test_session_neighbours_count_places_in_the_session_not_in_the_project(capsules):
    from capy.capsules.recall import _where
    from capy.capsules.sqlite.recall import session_neighbours

    # Two agents in one project: the other session's notes land between this session's error
    # and its fix, and a window over the project's order spent its reach on them.
    events = [
        _draft("error", "database is locked", "night", "2026-05-01T10:00:00Z"),
        *(
            _draft("note", f"other agent step {i}", "day", f"2026-05-01T10:0{i}:00Z")
            for i in (1, 2, 3, 4)
        ),
        _draft("tool_call", "$ kill 4242", "night", "2026-05-01T10:05:00Z"),
        _draft("note", "no session here", None, "2026-05-01T10:06:00Z"),
    ]
    capsules.write(events)
    drain(capsules)
    numbers = [n for n, _ in capsules.backend.scan()]
    where = _where(capsules, "project", None, None, None)
    around = session_neighbours(capsules.conn, [numbers[0], numbers[6]], 1, where)
    assert around[numbers[0]] == [(numbers[5], 1)]
    # A capsule without a session has no session neighbours.
    assert around[numbers[6]] == []


def test_the_graph_list_finds_capsules_naming_the_querys_entities(recalled):
    result = recall(recalled, "retry_busy()")
    assert any("graph" in item.lists for item in result.items)


def test_near_duplicates_are_folded_into_one_item(recalled):
    result = recall(recalled, "staging server disk fills up")
    notes = [item for item in result.items if item.kind == "note"]
    assert len(notes) == 1 and len(notes[0].folded) == 1
    assert "+1 similar" in result.brief


def test_below_the_relevance_floor_the_brief_says_nothing_matched(recalled):
    result = recall(recalled, "kubernetes helm chart rollout")
    assert result.items == ()
    assert result.brief.startswith("Nothing in the capsule log matched")


def test_a_capsule_id_recalls_that_capsule(recalled):
    first = recall(recalled, "colour palette theme").items[0]
    by_id = recall(recalled, first.capsule_id[:10])
    assert [item.capsule_id for item in by_id.items] == [first.capsule_id]
    assert by_id.items[0].lists == ("id",)


def test_kinds_since_and_scope_narrow_what_is_recalled(recalled):
    only = recall(recalled, "import database locked", kinds=["decision"])
    assert {item.kind for item in only.items} == {"decision"}
    later = recall(recalled, "import database locked", since="2026-05-02T00:00:00Z")
    assert all(item.created_at >= "2026-05-02" for item in later.items)
    assert recall(recalled, "import database locked", project="elsewhere").items == ()
    assert recall(recalled, "import database locked", scope="all").items


def test_unknown_kinds_and_bad_times_are_one_clear_error(recalled):
    with pytest.raises(CapsuleError, match="no capsule kind 'memo'"):
        recall(recalled, "import", kinds=["memo"])
    with pytest.raises(CapsuleError, match="ISO 8601"):
        recall(recalled, "import", since="last tuesday")


def test_a_small_budget_opens_with_the_session_summary(recalled):
    brief = recall_brief(recalled, "orders import database locked", budget_tokens=300)
    assert f"Session `{SESSION}` in brief:" in brief
    assert estimate_tokens(brief, 3.5) <= 300


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=200), budget=st.integers(min_value=-5, max_value=4000))
def test_the_brief_never_exceeds_its_budget_for_any_query(recalled, query, budget):
    result = recall(recalled, query, budget_tokens=budget)
    pack = recalled.rules.view("capsules").recall
    assert estimate_tokens(result.brief, pack.chars_per_token) <= pack.budget(budget)
    assert result.tokens <= result.budget_tokens


_ITEM = st.builds(
    RecallItem,
    capsule_id=st.text(alphabet="0123456789abcdef", min_size=64, max_size=64),
    kind=st.sampled_from(["prompt", "response", "note", "error"]),
    created_at=st.just("2026-05-01T10:00:00.000000Z"),
    session_id=st.one_of(st.none(), st.text(max_size=80)),
    project=st.just("p"),
    score=st.floats(0, 1),
    text=st.text(max_size=3000),
    folded=st.lists(st.just("f" * 64), max_size=3).map(tuple),
)


@settings(max_examples=300, deadline=None)
@given(
    query=st.text(max_size=400),
    items=st.lists(_ITEM, max_size=15),
    budget=st.integers(min_value=1, max_value=3000),
    summary=st.one_of(st.none(), st.tuples(st.text(max_size=60), st.text(max_size=2000))),
)
def test_render_brief_fits_any_items_in_any_budget(query, items, budget, summary):
    pack = load_rules().view("capsules").recall
    brief = render_brief(query, items, budget, pack, summary=summary)
    assert estimate_tokens(brief, pack.chars_per_token) <= budget


def test_scope_defaults_to_the_stores_project(recalled):
    assert recalled.default_scope == Scope(str(recalled.location.project_root))


def test_below_the_floor_a_found_capsule_sinks_instead_of_going_once_the_query_matched():
    def ranked():
        return [Ranked(1, 1.0), Ranked(2, 0.9), Ranked(3, 0.8), Ranked(4, 0.7)]

    shares, found = [0.15, 0.5, 0.0, 0.0], [True, True, True, False]
    # A hard floor drops every word-search hit below it; other lists' capsules stay.
    assert [e.n for e in below_floor(ranked(), shares, found, 0.2, None)] == [2, 4]
    # With a power, a hit just under the floor keeps most of its score, one far under sinks.
    soft = below_floor(ranked(), shares, found, 0.2, 2.0)
    assert [e.n for e in soft] == [2, 4, 1, 3]
    assert soft[2].score == pytest.approx(1.0 * (0.15 / 0.2) ** 2)
    # When no hit reaches the floor the query matched nothing: the hard rule applies.
    assert [e.n for e in below_floor(ranked(), [0.1, 0.1, 0.0, 0.0], found, 0.2, 2.0)] == [4]


def test_below_the_floor_only_the_part_the_word_searches_gave_sinks():
    from capy.capsules.recall.ranking import fuse

    # 1: a word hit that also sits among good hits; 2: a neighbour only the context list
    # found; 3: a hit covering the query, so it matched.
    lists = {"lexical": [1, 3], "context": [1, 2]}
    weights = {"lexical": 1.0, "context": 0.7}
    fused = fuse(lists, weights, 5)
    shares = [{1: 0.1, 2: 0.0, 3: 0.5}[entry.n] for entry in fused]
    found = ["lexical" in entry.lists for entry in fused]
    ranked = below_floor(fused, shares, found, 0.2, 2.0, ("lexical",))
    # The context list's part of hit 1 is not judged, as it is not for capsule 2.
    scores = {entry.n: entry.score for entry in ranked}
    lexical, context = 1.0 / 6, 0.7 / 6
    assert scores[1] == pytest.approx(lexical * (0.1 / 0.2) ** 2 + context)
    assert [entry.n for entry in ranked] == [1, 3, 2]


def test_an_or_pass_starting_from_rare_phrases_ranks_as_scoring_every_match(capsules):
    """The capsule corpus ranks an OR pass from its rare phrases (MaxScore) and common-only
    matches within a window: on a log whose common word is in every capsule, the top it
    returns is the top of scoring every match."""
    from capy.capsules.sqlite.recall import CapsuleCorpus, RecallScope
    from capy.retrieval import SearchFilters

    words = ["alpha", "beta", "gamma", "delta"]
    drafts = [
        CapsuleDraft(
            kind="note",
            content=f"common {words[i % 4]} " + ("rare " if i % 9 == 0 else "") + f"n{i}",
            source="cli",
        )
        for i in range(120)
    ]
    capsules.write(drafts)
    drain(capsules)
    phrases = ('"rare"', '"common"', '"alpha"')
    query = " OR ".join(phrases)

    def top(essential_rows: int, window: int | None) -> list[tuple[int, float]]:
        corpus = CapsuleCorpus(
            capsules.conn,
            RecallScope(),
            weights=(1.0, 1.0),
            essential_rows=essential_rows,
            window=window,
        )
        found = corpus.match("porter", query, 20, SearchFilters(), any_of=phrases)
        return [(hit.chunk_id, round(hit.rank, 9)) for hit in found]

    every = top(0, None)
    assert len(every) == 20
    assert top(40, None) == every  # exact: rare and alpha chunks hold the top
    assert top(40, 200) == every


@pytest.mark.parametrize(
    "query",
    [
        "kubernetes helm chart rollout of the orders service",
        "terraform plan drift in the staging vpc",
        # retry_busy is an entity the diff names: the graph list finds the diff too, and must
        # not bring back the hit its words were judged on.
        "retry_busy kubernetes helm chart rollout canary",
    ],
)
def test_when_nothing_matched_nothing_derived_from_the_dropped_hits_is_returned(recalled, query):
    """A query sharing a common word with some capsules, and too little of itself to reach
    the floor, matched nothing: its word-search hits go, and so must the session neighbours
    the context list found next to them (they were found only through those hits), and a
    dropped hit may not return through another list."""
    result = recall(recalled, query)
    assert result.items == (), [(item.kind, item.lists) for item in result.items]
    assert result.brief.startswith("Nothing in the capsule log matched")


def test_with_a_hard_floor_the_neighbours_of_a_dropped_hit_go_and_those_of_a_kept_one_stay(
    capsules,
):
    """Without `floor_power` the floor drops each word-search hit below it: the capsules next
    to a dropped hit in its session were found only through it and go with it, while the
    neighbours of a hit that stays are still recalled."""
    from capy.capsules.recall import _settings, _where
    from capy.capsules.recall.rank import ranked_items

    episodes = {
        "sess-disk": [
            ("prompt", "Why does the staging server run out of space?"),
            ("note", "The staging server disk fills up every Friday: log rotation is weekly."),
            ("decision", "Rotate the logs daily and keep seven days."),
        ],
        "sess-ui": [
            ("prompt", "Make the sidebar collapsible on narrow screens."),
            ("response", "Clearing the browser cache frees some disk space too."),
            ("diff", "ui/sidebar.css: hide the sidebar below 600px behind a toggle"),
        ],
    }
    capsules.write(
        [
            _draft(kind, text, session, f"2026-05-0{1 + day}T10:{index:02d}:00Z")
            for day, (session, events) in enumerate(episodes.items())
            for index, (kind, text) in enumerate(events)
        ]
    )
    drain(capsules)
    hard = _settings(capsules).model_copy(update={"floor_power": None})
    where = _where(capsules, "project", None, None, None)
    query = "staging server disk log rotation weekly friday"
    items, _ = ranked_items(capsules, query, where, hard, vectors=None, budget=1500)
    texts = [item.text for item in items]
    assert any("fills up every Friday" in text for text in texts)
    assert any("Rotate the logs daily" in text for text in texts)  # a kept hit's neighbour
    assert not any("browser cache" in text for text in texts)  # the dropped hit
    assert not any("sidebar" in text for text in texts)  # the dropped hit's neighbours


def test_the_lexical_list_takes_its_bounds_from_the_capsules_pack():
    """On a large log a question's common words match thousands of capsules: recall ranks
    within the capsules pack's `recall.lexical` bounds, and keeps the search pack's where the
    capsules pack sets none."""
    from capy.capsules.recall.lists import _for_recall

    rules = load_rules()
    search, settings = rules.view("search"), rules.view("capsules").recall
    own = settings.lexical
    assert own is not None
    made = _for_recall(search, settings)
    assert made.bm25.rank_window == own.rank_window != search.bm25.rank_window
    assert made.bm25.essential_rows == own.essential_rows
    assert made.query.trigram_when_porter_below == own.trigram_when_porter_below
    assert made.limits.max_results >= settings.candidates
    assert _for_recall(search, settings) is made  # made once, not per query
    plain = _for_recall(search, settings.model_copy(update={"lexical": None}))
    assert plain.bm25 == search.bm25 and plain.query == search.query


def test_the_first_word_hits_stay_among_the_first_items_whatever_other_lists_add(
    capsules, monkeypatch
):
    """Lists built from the word hits (their session neighbours, the graph around the query's
    entities) outnumber the word lists in the fusion; they may rank capsules up, but never push
    the first hit of plain bm25 or of the lexical list out of the first five."""
    import capy.capsules.recall as recall_module
    from capy.rules.views.capsules import RecallAnchors

    answer = "The flaky checkout_total test timed out on the currency rounding fixture."
    _write_session(capsules, "answer", [("error", answer)])
    crowd = [("note", f"Standup note {i}: nothing about tests today.") for i in range(4)]
    crowd[1:1] = [("tool_call", "$ pytest -k checkout  # the checkout tests again")]
    crowd[4:4] = [("response", "The currency module needs a rounding fixture.")]
    _write_session(capsules, "crowd", crowd * 2)
    question = "Why did the flaky checkout_total test time out on the currency rounding fixture?"
    settings = recall_module._settings(capsules)
    # A context list weighed far above the word lists puts every neighbour of the weaker word
    # hits first.
    heavy = settings.weights.model_copy(update={"context": 20.0})

    def ranked(anchors):
        chosen = settings.model_copy(update={"weights": heavy, "anchors": anchors})
        monkeypatch.setattr(recall_module, "_settings", lambda store: chosen)
        return [item.text for item in recall(capsules, question).items]

    assert answer not in ranked(None)[:5]
    anchors = RecallAnchors(lists=("plain", "lexical"), top=1, within=5)
    assert answer in ranked(anchors)[:5]


def test_anchored_hits_take_the_places_of_the_last_others_within_reach():
    from capy.capsules.recall.ranking import anchored

    order = [1, 2, 3, 4, 5, 6, 7, 8]
    # 7 moves up to the fifth place; 5, which held it, comes right after.
    assert anchored(order, [7], 5) == [1, 2, 3, 4, 7, 5, 6, 8]
    # An anchor in place stays where it is; two missing ones push out the last two others.
    assert anchored(order, [2, 8, 6], 5) == [1, 2, 3, 8, 6, 4, 5, 7]
    # An anchor not among the items is ignored; more anchors than places keep the best.
    assert anchored(order, [9, 8, 7], 1) == [8, 1, 2, 3, 4, 5, 6, 7]
    assert anchored(order, [3], 0) == order


@settings(max_examples=300, deadline=None)
@given(
    order=st.lists(st.integers(0, 40), unique=True, max_size=30),
    anchors=st.lists(st.integers(0, 45), max_size=8),
    within=st.integers(1, 10),
)
def test_anchored_keeps_every_item_and_puts_the_anchors_within_reach(order, anchors, within):
    from capy.capsules.recall.ranking import anchored

    result = anchored(order, anchors, within)
    assert sorted(result) == sorted(order)
    wanted = [n for n in dict.fromkeys(anchors) if n in order][:within]
    assert set(wanted) <= set(result[:within])
    # An item that was within reach and is not an anchor only ever moves down by as many
    # places as anchors moved in; an anchor in place never moves.
    for n in order[:within]:
        if n in wanted:
            assert result.index(n) <= order.index(n)
    others = [n for n in result if n not in wanted]
    assert others == [n for n in order if n not in wanted]


def test_the_vector_list_never_takes_first_place_from_a_hit_it_agrees_on():
    from capy.capsules.recall.ranking import agreed_first, fuse

    # Without vectors 1 ranks first; the vector list ranks 2 first and holds 1 lower down.
    lists = {"lexical": [1, 2, 3], "vector": [2, 3, 1]}
    fused = fuse(lists, {"lexical": 1.0, "vector": 1.0}, 5)
    assert fused[0].n == 2
    assert agreed_first(fused, "vector") == [1, 2, 3]
    # A first hit the vector list does not hold may lose first place, unless agreement is
    # not asked for.
    fused = fuse({"lexical": [1, 2, 3], "vector": [2, 3]}, {"lexical": 1.0, "vector": 1.0}, 5)
    assert agreed_first(fused, "vector") == [2, 3, 1]
    assert agreed_first(fused, "vector", agreed=False) == [1, 2, 3]
    # Without the list there is nothing to undo.
    assert agreed_first(fuse({"lexical": [1, 2]}, {"lexical": 1.0}, 5), "vector") == [1, 2]
