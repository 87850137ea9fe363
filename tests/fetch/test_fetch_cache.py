"""The fetch cache: a fresh indexed copy answers a repeated fetch without touching the server;
`force` refetches; a label reused for another URL never serves the wrong page."""

from __future__ import annotations

from capy.fetch.outcome import Status


def test_a_second_fetch_is_served_from_the_cache(site, allow_loopback, fetch):
    url = site.url("/docs.html")
    first = fetch(url)
    second = fetch(url)
    [outcome] = second.outcomes
    assert outcome.status is Status.CACHED
    assert site.hits["/docs.html"] == 1
    assert second.reply.cache_hits == 1 and first.reply.cache_hits == 0
    assert outcome.chunk_count == first.outcomes[0].chunk_count
    assert outcome.preview == first.outcomes[0].preview
    assert outcome.cache_ttl_seconds == 24 * 3600  # the retention pack's default TTL
    assert "From the cache" in second.reply.text and "force=true" in second.reply.text


def test_force_fetches_again_and_restarts_the_cache_clock(site, allow_loopback, fetch, workspace):
    url = site.url("/docs.html")
    fetch(url)
    with workspace.store() as store:
        store.conn.execute("UPDATE sources SET indexed_at = indexed_at - 3600")
    [outcome] = fetch(url, force=True).outcomes
    assert outcome.status is Status.UNCHANGED
    assert site.hits["/docs.html"] == 2
    [again] = fetch(url).outcomes
    assert again.status is Status.CACHED
    assert again.cache_age_seconds is not None and again.cache_age_seconds < 600


def test_an_expired_entry_is_fetched_again(site, allow_loopback, fetch, workspace):
    url = site.url("/docs.html")
    fetch(url)
    with workspace.store() as store:
        store.conn.execute("UPDATE sources SET indexed_at = indexed_at - 25 * 3600")
    [outcome] = fetch(url).outcomes
    assert outcome.status is Status.UNCHANGED
    assert site.hits["/docs.html"] == 2


def test_the_cache_is_kept_per_kind(site, allow_loopback, fetch):
    url = site.url("/docs.html")
    fetch(url)
    [outcome] = fetch(url, kind="ephemeral").outcomes
    assert outcome.status is Status.INDEXED
    assert site.hits["/docs.html"] == 2


def test_a_label_reused_for_another_page_fetches_that_page(site, allow_loopback, fetch, search):
    fetch(site.url("/docs.html"), source="manual")
    [outcome] = fetch(site.url("/notes.txt"), source="manual").outcomes
    assert outcome.status is Status.INDEXED
    assert site.hits["/notes.txt"] == 1
    assert search("quokka", source="manual").hits
    [cached] = fetch(site.url("/notes.txt"), source="manual").outcomes
    assert cached.status is Status.CACHED
