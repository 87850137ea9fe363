"""Several URLs in one call: fetched concurrently, each reported on its own, one failure
leaving the others indexed; issue and pull-request URLs answered with the CLI to use."""

from __future__ import annotations

import pytest

from capy.api import ToolInputError
from capy.fetch.outcome import Status


def test_several_urls_with_one_failing_index_the_others(site, allow_loopback, fetch):
    urls = [site.url("/docs.html"), site.url("/missing"), site.url("/data.json")]
    report = fetch(urls, concurrency=3)
    statuses = [outcome.status for outcome in report.outcomes]
    assert statuses == [Status.INDEXED, Status.FAILED, Status.INDEXED]  # in the order asked
    assert not report.reply.is_error
    text = report.reply.text
    assert text.startswith("# Fetch: 3 URLs (2 indexed, 1 failed)")
    assert "Not fetched: the server answered HTTP 404" in text


def test_a_shared_source_labels_each_url_and_one_prefix_searches_them_all(
    site, allow_loopback, fetch, search
):
    report = fetch([site.url("/docs.html"), site.url("/notes.txt")], source="kb")
    assert [outcome.label for outcome in report.outcomes] == [
        f"kb {site.url('/docs.html')}",
        f"kb {site.url('/notes.txt')}",
    ]
    assert 'source="kb *"' in report.reply.text
    assert search("quokka", source="kb *").hits
    assert search("zanzibar", source="kb *").hits


def test_requests_can_carry_their_own_labels(site, allow_loopback, fetch):
    report = fetch(
        [{"url": site.url("/docs.html"), "source": "guide"}, {"url": site.url("/data.json")}]
    )
    assert [outcome.label for outcome in report.outcomes] == ["guide", site.url("/data.json")]


def test_a_github_issue_url_is_answered_with_the_gh_command(fetch):
    report = fetch("https://github.com/octo-org/octo-repo/issues/42")
    [outcome] = report.outcomes
    assert outcome.status is Status.ROUTED
    assert outcome.command == "gh issue view 42 --repo octo-org/octo-repo --comments"
    assert "`gh issue view 42 --repo octo-org/octo-repo --comments`" in report.reply.text
    assert not report.reply.is_error
    assert report.reply.processed_bytes == 0


def test_a_gitlab_merge_request_url_is_answered_with_the_glab_command(fetch):
    [outcome] = fetch("https://gitlab.com/group/project/-/merge_requests/12").outcomes
    assert outcome.command == "glab mr view 12 --repo group/project --comments"


def test_only_failures_make_the_reply_an_error(fetch):
    report = fetch(["ftp://example.com/file", "http://no-such-host.invalid/"])
    assert report.reply.is_error
    assert report.reply.text.startswith("# Fetch: 2 URLs (2 failed)")


def test_progress_is_reported_once_per_url(site, allow_loopback, fetch):
    seen = []
    fetch(
        [site.url("/docs.html"), site.url("/missing"), "https://github.com/o/r/pull/1"],
        progress=lambda done, total: seen.append((done, total)),
    )
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_ephemeral_sources_are_shown_with_the_kind_to_include(site, allow_loopback, fetch):
    text = fetch(site.url("/notes.txt"), kind="ephemeral").reply.text
    assert 'include_kinds=["ephemeral"]' in text


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"kind": "session"}, "kind must be durable"),
        ({"concurrency": 0}, "from 1 to 8"),
        ({"concurrency": 9}, "from 1 to 8"),
        ({"source": " "}, "non-empty label"),
    ],
)
def test_arguments_that_cannot_work_are_refused(fetch, options, expected):
    with pytest.raises(ToolInputError, match=expected):
        fetch("https://example.com/", **options)


def test_no_urls_is_refused(fetch):
    with pytest.raises(ToolInputError, match="at least one URL"):
        fetch([])


def test_urls_are_fetched_concurrently(site, allow_loopback, fetch):
    urls = [site.url("/together?n=1"), site.url("/together?n=2")]
    report = fetch(urls, concurrency=2)
    assert [outcome.status for outcome in report.outcomes] == [Status.INDEXED, Status.INDEXED]
    assert site.hits["/together"] == 2


def test_a_secret_in_a_url_is_masked_in_the_label_and_the_reply(
    site, allow_loopback, fetch, workspace
):
    token = "ghp_a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"
    report = fetch(site.url(f"/notes.txt?access_token={token}"))
    [outcome] = report.outcomes
    assert outcome.status is Status.INDEXED
    assert token not in report.reply.text and token not in outcome.label
    assert "[REDACTED" in outcome.label
    with workspace.store() as store:
        labels = [row[0] for row in store.conn.execute("SELECT label FROM sources")]
    assert labels == [outcome.label]
