"""Capsules on the semantic layer: the pipeline's embed stage writes vectors into the encrypted
capsule log, and recall's vector list finds a capsule said in other words. Skipped, saying
why, without the extra."""

from __future__ import annotations

import pytest

from capy.capsules import CapsuleDraft, open_capsules
from capy.capsules.pipeline import drain
from capy.capsules.recall import recall
from capy.rules import load_rules

NOTES = [
    "Graceful shutdown: stop the server by sending SIGTERM; workers finish their jobs first.",
    "A 401 appears after token refresh when the clock drifts.",
    "Rename the colour palette module to theme and update its imports.",
]


def _why_not() -> str | None:
    from capy.bench.hybrid import semantic_ready

    return semantic_ready(load_rules())


needs_model = pytest.mark.skipif(
    _why_not() is not None,
    reason=f"semantic layer unavailable: {_why_not()} (.ci/run installs capy-mcp[semantic])",
)


def test_without_the_layer_recall_has_no_vector_list() -> None:
    from capy.semantic.capsules import NoVectors

    assert NoVectors().nearest(None, "anything", None, 5) == []


@needs_model
def test_embedded_capsules_are_recalled_by_meaning(project_dir) -> None:
    from capy.semantic.capsules import NoVectors, capsule_vector_search

    searcher = capsule_vector_search()
    assert searcher is not None
    with open_capsules(project_dir=project_dir) as store:
        store.write([CapsuleDraft(kind="note", content=note, source="cli") for note in NOTES])
        assert not drain(store).failed
        rows = store.conn.execute(
            "SELECT count(*), min(length(vector)) FROM capsule_vectors WHERE model = ?",
            (searcher.model_id,),
        ).fetchone()
        assert rows == (len(NOTES), 384 * 2)  # one float16 vector per chunk
        question = "how to halt a daemon cleanly"
        lexical = recall(store, question, vectors=NoVectors())
        hybrid = recall(store, question, vectors=searcher)
    assert not any("SIGTERM" in item.text for item in lexical.items)
    assert "SIGTERM" in hybrid.items[0].text and "vector" in hybrid.items[0].lists


@needs_model
def test_a_capsule_said_in_other_words_joins_a_brief_the_words_matched(project_dir) -> None:
    """The lone vector hit's floor (search pack `min_similarity_alone`) holds only when no word
    search matched: a question whose words found something also gets a capsule that says it
    in other words at the capsules pack's lower `recall.vectors.min_similarity`; a question
    that matched nothing still gets only what is close enough to stand alone."""
    from capy.semantic.capsules import capsule_vector_search
    from capy.semantic.embedder import shared_embedder

    rules = load_rules()
    floor = rules.view("search").vectors.min_similarity_alone
    matched_floor = rules.view("capsules").recall.vectors.min_similarity
    notes = [
        "The server listens on port 8080 by default.",
        "Graceful shutdown: send SIGTERM and the daemon finishes its jobs first.",
        "Rename the colour palette module to theme and update its imports.",
    ]
    question = "how do I stop the server"
    model = rules.view("semantic").model()
    vectors = shared_embedder(model, 1).vectors([question, notes[1]])
    # Near enough while words matched, too far to be shown on its own.
    assert matched_floor <= float(vectors[0] @ vectors[1]) < floor
    searcher = capsule_vector_search()
    with open_capsules(project_dir=project_dir) as store:
        # One session each: no capsule reaches another through the context list.
        store.write(
            [
                CapsuleDraft(kind="note", content=note, source="cli", metadata={"session_id": note})
                for note in notes
            ]
        )
        assert not drain(store).failed
        found = recall(store, question, vectors=searcher)
        absent = recall(store, "kubernetes helm chart values", vectors=searcher)
    texts = [item.text for item in found.items]
    assert any("port 8080" in text for text in texts)
    shutdown = next(item for item in found.items if "SIGTERM" in item.text)
    assert shutdown.lists == ("vector",)
    assert not absent.items


def test_a_turn_is_embedded_led_by_the_turn_before_it_in_its_session(project_dir) -> None:
    """The embed text rule (semantic pack `capsule_context`): a short answer is embedded with
    the turn it answers, never with another session's turn; the chunk stays the capsule's own."""
    from capy.capsules.stages import StageContext
    from capy.capsules.stages.embed import embed_texts

    rules = load_rules()
    rule = rules.view("semantic").embedding.capsule_context
    assert rule is not None and rule.before >= 1
    turns = [
        ("a", "Did you finish the pottery class you signed up for in May?"),
        ("b", "Unrelated: the train to Lisbon leaves at nine."),
        ("a", "Yes, I did!"),
    ]
    with open_capsules(project_dir=project_dir) as store:
        store.write(
            [
                CapsuleDraft(
                    kind="note", content=text, source="cli", metadata={"session_id": session}
                )
                for session, text in turns
            ]
            + [CapsuleDraft(kind="note", content="No session here.", source="cli")]
        )
        assert not drain(store).failed  # the chunk stage makes the chunks
        context = StageContext(store.conn, rules, "embed", "test")
        numbers = [n for (n,) in store.conn.execute("SELECT n FROM capsules ORDER BY n")]
        answer = embed_texts(context, numbers[2])
        alone = embed_texts(context, numbers[3])
        first = embed_texts(context, numbers[0])
        own = store.conn.execute("SELECT content FROM capsule_chunks").fetchall()
    assert len(answer) == 1 and "pottery class" in answer[0][1] and "Yes, I did!" in answer[0][1]
    assert "Lisbon" not in answer[0][1]
    assert alone[0][1].endswith("No session here.") and "Yes" not in alone[0][1]
    assert first[0][1].endswith(turns[0][1]) and "Lisbon" not in first[0][1]
    assert not any("pottery" in text and "Yes, I did" in text for (text,) in own)


def test_the_embed_text_rule_is_part_of_the_capsule_vectors_model_id() -> None:
    """Vectors record the model and the text rule, so a rule change marks them stale (the
    embed stage's derivation version takes the embedder's model id) and recall ignores them."""
    pack = load_rules().view("semantic")
    model = pack.model()
    rule = pack.embedding.capsule_context
    assert model is not None and rule is not None
    version = pack.capsule_vector_version(model)
    assert version.startswith(model.model_id) and version.endswith(f"+{rule.tag}")


@needs_model
def test_forgetting_a_turn_re_embeds_the_turns_that_read_it(project_dir) -> None:
    """A neighbour's vector read the forgotten turn's text: it is dropped with it and made
    again, on the next drain, from what is left."""
    from capy.capsules.stages import StageContext
    from capy.capsules.stages.embed import embed_texts

    rules = load_rules()
    said = ["We adopted a puppy named Biscuit.", "Oh, what breed is it?", "A beagle."]
    with open_capsules(project_dir=project_dir) as store:
        written = store.write(
            [
                CapsuleDraft(kind="note", content=t, source="cli", metadata={"session_id": "s"})
                for t in said
            ]
        )
        assert not drain(store).failed
        store.forget(written[0].id, "private")
        numbers = [n for (n,) in store.conn.execute("SELECT n FROM capsules ORDER BY n")]
        kept = store.conn.execute(
            "SELECT count(*) FROM capsule_vectors WHERE capsule_n = ?", (numbers[1],)
        ).fetchone()[0]
        assert kept == 0
        assert not drain(store).failed
        again = store.conn.execute(
            "SELECT count(*) FROM capsule_vectors WHERE capsule_n = ?", (numbers[1],)
        ).fetchone()[0]
        text = embed_texts(StageContext(store.conn, rules, "embed", "test"), numbers[1])
    assert again == 1 and "Biscuit" not in text[0][1]
