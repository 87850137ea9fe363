"""Pages fetched from a real loopback server become searchable text: HTML as markdown without
its chrome, JSON as JSON, plain text as it came."""

from __future__ import annotations

from capy.fetch.outcome import Status


def test_an_html_page_is_indexed_as_markdown_without_its_chrome(site, allow_loopback, fetch):
    report = fetch(site.url("/docs.html"))
    [outcome] = report.outcomes
    assert outcome.status is Status.INDEXED
    assert outcome.content_type == "markdown"
    assert outcome.converted_from_html
    assert outcome.title == "Frobnicator Guide"
    assert outcome.preview == ("# Frobnicator Guide", "## Installation", "## Calibration")
    assert not report.reply.is_error
    assert report.reply.processed_bytes == outcome.fetched_bytes > outcome.stored_bytes


def test_the_stored_page_keeps_headings_and_text_and_drops_scripts_and_navigation(
    site, allow_loopback, fetch, workspace
):
    from capy.fetch.cache import stored_text

    [outcome] = fetch(site.url("/docs.html")).outcomes
    with workspace.store() as store:
        source_id = store.conn.execute(
            "SELECT id FROM sources WHERE label = ?", (outcome.label,)
        ).fetchone()[0]
        text = stored_text(store, source_id)
    assert text.startswith(f"# Frobnicator Guide\nURL: {site.url('/docs.html')}\n")
    assert "## Calibration" in text and "zanzibar coefficient" in text
    for chrome in ("analytics-beacon", "sidebar", "Navigation entry", "Sitewide banner", "footer"):
        assert chrome not in text
    assert "base64" not in text and "rotor diagram" in text  # data: image gone, its alt kept
    assert text.count("# Frobnicator Guide") == 1  # the article's own h1 repeats the title


def test_a_fetched_page_is_found_by_search_under_its_label(site, allow_loopback, fetch, search):
    [outcome] = fetch(site.url("/docs.html")).outcomes
    result = search("zanzibar coefficient", source=outcome.label)
    assert result.hits, "the fetched page should be searchable"
    assert "0.73" in result.hits[0].content
    assert "Calibration" in result.hits[0].title


def test_the_reply_says_how_to_search_the_page(site, allow_loopback, fetch):
    url = site.url("/docs.html")
    text = fetch(url).reply.text
    assert f'`capy_search(queries=["<what you need>"], source="{url}")`' in text
    assert "include_kinds" not in text  # durable sources are searched by default
    assert "zanzibar" not in text  # the page itself stays out of the reply


def test_json_is_kept_as_json_and_searchable(site, allow_loopback, fetch, search):
    [outcome] = fetch(site.url("/data.json")).outcomes
    assert outcome.content_type == "json"
    assert outcome.preview == ("object with 2 keys: service, regions",)
    hits = search("max_batch", source=outcome.label).hits
    assert hits and "417" in hits[0].content


def test_plain_text_is_kept_as_it_came(site, allow_loopback, fetch, search):
    [outcome] = fetch(site.url("/notes.txt")).outcomes
    assert outcome.status is Status.INDEXED
    assert outcome.preview[:2] == ("plain notes", "the quokka protocol uses port 7301")
    assert search("quokka protocol", source=outcome.label).hits


def test_a_declared_charset_is_honoured(site, allow_loopback, fetch, search):
    [outcome] = fetch(site.url("/latin1.html")).outcomes
    assert outcome.title == "Café"
    hits = search("crème brûlée", source=outcome.label).hits
    assert hits and "crème brûlée" in hits[0].content


def test_a_page_with_nothing_left_after_conversion_is_reported(site, allow_loopback, fetch):
    report = fetch(site.url("/empty.html"))
    [outcome] = report.outcomes
    assert outcome.status is Status.FAILED
    assert outcome.failure == "empty"
    assert report.reply.is_error
