"""The reply an agent reads for a mixed batch, as a snapshot: layout, wording, search calls."""

from __future__ import annotations


def test_the_reply_for_a_mixed_batch(site, allow_loopback, fetch, snapshot):
    urls = [
        site.url("/docs.html"),
        site.url("/data.json"),
        site.url("/image.png"),
        "https://github.com/octo-org/octo-repo/pull/1347",
    ]
    text = fetch(urls, source="kb").reply.text
    assert text.replace(str(site.port), "PORT") == snapshot


def test_the_reply_stays_small_next_to_the_page(site, allow_loopback, fetch):
    site.add(
        "/long.html",
        "<html><head><title>Long</title></head><body>"
        + "".join(f"<h2>Part {n}</h2><p>{'filler words ' * 80}</p>" for n in range(40))
        + "</body></html>",
        "text/html",
    )
    reply = fetch(site.url("/long.html")).reply
    assert reply.returned_bytes * 20 < reply.processed_bytes
