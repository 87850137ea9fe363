"""JSON: key paths, batched arrays with identities in titles, verbatim values, fallbacks."""

from __future__ import annotations

import json

from capy.chunking import chunk_text


def test_titles_follow_key_paths_and_identities(chunk, snapshot):
    assert [c.title for c in chunk("incidents.json")] == snapshot


def test_values_stay_verbatim_and_findable(chunk, checks):
    chunks = chunk("incidents.json")
    (top,) = checks.containing(chunks, '"total_count": 287')
    assert top.title == "{total_count, page, per_page, links}"
    (item,) = checks.containing(chunks, "payments provider returns HTTP 402 for valid cards")
    assert "A stale BIN table was deployed with release 4.12.0" in item.content
    assert '"id": 9107' in item.content


def test_every_incident_is_whole_in_one_chunk(chunk, fixture_text):
    chunks = chunk("incidents.json")
    for incident in json.loads(fixture_text("incidents.json"))["incidents"]:
        rendered = json.dumps(incident, ensure_ascii=False)
        assert sum(rendered in c.content for c in chunks) == 1


def test_single_item_title_names_two_identity_fields(rules):
    items = [{"id": n, "name": f"svc-{n}", "blob": "x" * 3000} for n in range(3)]
    chunks = chunk_text(json.dumps({"items": items}), rules=rules)
    assert [c.title for c in chunks] == [f"items > [id={n}, name=svc-{n}]" for n in range(3)]


def test_nested_identity_names_kubernetes_items(rules):
    pods = [{"metadata": {"name": f"web-{n}"}, "spec": {"pad": "y" * 1500}} for n in range(4)]
    titles = [c.title for c in chunk_text(json.dumps({"items": pods}), rules=rules)]
    assert titles[0] == "items > [web-0, web-1]"


def test_array_batches_respect_item_count(rules):
    rows = [{"n": n, "pad": "x" * 100} for n in range(100)]
    chunks = chunk_text(json.dumps(rows, indent=2), rules=rules)
    assert [c.content.count("\n") + 1 for c in chunks] == [rules.json_.array_batch_items] * 5
    assert chunks[0].title == "[0-19]"


def test_depth_cap_serialises_deeper_values_as_text(chunk, rules):
    deep = [c for c in chunk("incidents.json") if c.title.startswith("meta > deep")]
    assert deep and all(
        len(c.title.split(rules.json_.key_path_separator)) == rules.json_.max_key_path_depth
        for c in deep
    )


def test_small_document_is_kept_exactly(chunk, fixture_text):
    (only,) = chunk("small.json")
    assert only.content == fixture_text("small.json").strip()
    assert only.title == "small.json"


def test_invalid_json_falls_back_to_plain_text(rules, checks):
    text = '{"name": "capy", "version": \n' + "\n".join(
        f"line {n} of a broken dump" for n in range(50)
    )
    chunks = chunk_text(text, content_type="json", label="dump", rules=rules)
    checks.lines_kept(text, chunks)
    # Titled as plain text is (its lines read as wrapped prose, so they may stay one chunk).
    assert chunks[0].title.startswith("dump (lines 1-")


def test_json_lines_are_chunked_as_a_log(chunk, checks, fixture_text):
    chunks = chunk("events.jsonl", content_type="json")
    checks.lines_kept(fixture_text("events.jsonl"), chunks)
    errors = [c for c in chunks if c.title.startswith('{"ts"')]
    assert len(errors) == 5 and all('"level": "error"' in c.title for c in errors)


def test_huge_string_value_is_cut_not_lost(rules):
    value = " ".join(f"word{n}" for n in range(5000))
    chunks = chunk_text(json.dumps({"a": 1, "text": value}), rules=rules)
    joined = "".join(c.content for c in chunks if c.title == "text")
    assert joined == json.dumps(value)
