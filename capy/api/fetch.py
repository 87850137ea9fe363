"""`capy_fetch_and_index` / `capy fetch`: fetch URLs through the SSRF guard, index them, and
answer with a preview and the search call to use, never with the pages.

Default kind: durable. A fetched page was asked for on purpose (the retention pack's durable
kind names "a doc or URL"), the agent searches it right away and later in the session, and
ephemeral sources are left out of default searches. Freshness is the fetch cache's job: each
URL's TTL decides when it is refetched, whatever the kind.

Fetches run on worker threads (network bound); conversion happens there too. Indexing runs on
the calling thread, one URL at a time, over one store connection.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from capy.api.reply import ToolInputError, ToolReply
from capy.fetch.requests import FetchRequest, PlannedFetch, RequestError, plan_fetches

if TYPE_CHECKING:
    import httpx

    from capy.api.hints import Hints
    from capy.api.workspace import Workspace
    from capy.fetch.document import Document
    from capy.fetch.http import FetchedPage
    from capy.fetch.limits import FetchLimits
    from capy.fetch.outcome import UrlOutcome
    from capy.rules import RuleSet
    from capy.store import Store

DEFAULT_KIND = "durable"

Progress = Callable[[int, int], None]
Urls = str | FetchRequest | Mapping[str, Any] | Sequence[str | FetchRequest | Mapping[str, Any]]


@dataclass(frozen=True)
class FetchReport:
    """The reply the agent reads, and the per-URL outcomes it was written from (for --json)."""

    reply: ToolReply
    outcomes: tuple[UrlOutcome, ...]


def fetch_and_index(
    workspace: Workspace,
    urls: Urls,
    *,
    source: str | None = None,
    force: bool = False,
    kind: str = DEFAULT_KIND,
    concurrency: int | None = None,
    progress: Progress | None = None,
) -> ToolReply:
    """Fetch each URL (or answer it from the cache), index it, and report per URL.

    Raises `ToolInputError` for arguments that cannot work (no URLs, unknown kind, concurrency
    out of range, broken settings); per-URL failures are reported in the reply instead.
    """
    return fetch_report(
        workspace,
        urls,
        source=source,
        force=force,
        kind=kind,
        concurrency=concurrency,
        progress=progress,
    ).reply


def fetch_report(
    workspace: Workspace,
    urls: Urls,
    *,
    source: str | None = None,
    force: bool = False,
    kind: str = DEFAULT_KIND,
    concurrency: int | None = None,
    progress: Progress | None = None,
) -> FetchReport:
    """`fetch_and_index` with the per-URL outcomes kept."""
    from capy.fetch.outcome import Status
    from capy.fetch.report import render_reply

    rules = workspace.rules
    limits = _limits(workspace, rules)
    kind = _checked_kind(kind, workspace.hints)
    workers = _checked_concurrency(concurrency, limits)
    try:
        plans = plan_fetches(urls, source=source, secrets=rules.view("secrets"))
    except RequestError as exc:
        raise ToolInputError(str(exc)) from None
    run = _Run(workspace, rules, limits, kind, force, len(plans), progress)
    outcomes = run.execute(plans, workers)
    retention = rules.view("retention")
    text = render_reply(
        outcomes,
        kind=kind,
        searched_by_default=retention.kinds.of(kind).in_default_search,
        shared_source=source.strip() if isinstance(source, str) and source.strip() else None,
        hints=workspace.hints,
    )
    reply = ToolReply(
        text=text,
        processed_bytes=sum(outcome.processed_bytes for outcome in outcomes),
        is_error=not any(outcome.status.succeeded for outcome in outcomes),
        cache_hits=sum(outcome.status is Status.CACHED for outcome in outcomes),
    )
    return FetchReport(reply, tuple(outcomes))


def _limits(workspace: Workspace, rules: RuleSet) -> FetchLimits:
    from capy.config import ConfigError, load_settings
    from capy.fetch.limits import FetchLimits

    try:
        settings = load_settings(workspace.project_dir).settings
    except ConfigError as exc:
        raise ToolInputError(" ".join(exc.lines)) from None
    return FetchLimits.from_rules(rules, settings.fetch)


def _checked_kind(kind: object, hints: Hints) -> str:
    from capy.rules.views.retention import SourceKind

    # Session sources are archive material (transcripts), never fetched pages.
    if kind not in {item.value for item in SourceKind} - {SourceKind.SESSION.value}:
        raise ToolInputError(
            f"kind must be durable (kept, searched by default) or ephemeral (expires, searched "
            f"with {hints.include_kinds_argument()}), not {kind!r}"
        )
    return str(kind)


def _checked_concurrency(concurrency: object, limits: FetchLimits) -> int:
    if concurrency is None:
        return limits.default_concurrency
    if (
        isinstance(concurrency, bool)
        or not isinstance(concurrency, int)
        or not 1 <= concurrency <= limits.max_concurrency
    ):
        raise ToolInputError(
            f"concurrency must be a whole number from 1 to {limits.max_concurrency}, "
            f"not {concurrency!r}"
        )
    return concurrency


class _Run:
    """One call's state: outcomes in request order, progress, the store and the client."""

    def __init__(
        self,
        workspace: Workspace,
        rules: RuleSet,
        limits: FetchLimits,
        kind: str,
        force: bool,
        total: int,
        progress: Progress | None,
    ) -> None:
        self.workspace = workspace
        self.rules = rules
        self.limits = limits
        self.kind = kind
        self.force = force
        self.total = total
        self.progress = progress
        self.done = 0
        self.now = int(time.time())

    def execute(self, plans: list[PlannedFetch], workers: int) -> list[UrlOutcome]:
        outcomes: dict[int, UrlOutcome] = {}
        with self.workspace.store() as store:
            to_fetch = []
            for index, plan in enumerate(plans):
                answered = self._answer_without_fetching(store, plan)
                if answered is None:
                    to_fetch.append(index)
                else:
                    self._finish(outcomes, index, answered)
            if to_fetch:
                self._fetch_all(store, plans, to_fetch, workers, outcomes)
        return [outcomes[index] for index in range(len(plans))]

    def _finish(self, outcomes: dict[int, UrlOutcome], index: int, outcome: UrlOutcome) -> None:
        outcomes[index] = outcome
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total)

    def _answer_without_fetching(self, store: Store, plan: PlannedFetch) -> UrlOutcome | None:
        from capy.fetch.issues import issue_route
        from capy.fetch.outcome import Status, UrlOutcome

        route = issue_route(plan.shown_url, self.rules.view("routing"))
        if route is not None:
            return UrlOutcome(
                plan.shown_url, Status.ROUTED, message=route.message, command=route.command
            )
        problem = _url_problem(plan.url, self.rules)
        if problem is not None:
            return _failed(plan, problem)
        return None if self.force else self._cached(store, plan)

    def _cached(self, store: Store, plan: PlannedFetch) -> UrlOutcome | None:
        from capy.fetch.cache import find_cached
        from capy.fetch.outcome import Status, UrlOutcome

        ttl = self.rules.view("retention").fetch_cache.ttl_for(plan.url)
        hit = find_cached(
            store,
            label=plan.label,
            kind=self.kind,
            shown_url=plan.shown_url,
            label_is_url=plan.label_is_url,
            ttl=ttl,
            now=self.now,
        )
        if hit is None:
            return None
        return UrlOutcome(
            plan.shown_url,
            Status.CACHED,
            label=plan.label,
            kind=self.kind,
            content_type=hit.content_type,
            stored_bytes=hit.size,
            chunk_count=hit.chunk_count,
            preview=self._preview(hit.text, hit.content_type),
            cache_age_seconds=hit.age_seconds,
            cache_ttl_seconds=int(ttl.total_seconds()),
        )

    def _fetch_all(
        self,
        store: Store,
        plans: list[PlannedFetch],
        indexes: list[int],
        workers: int,
        outcomes: dict[int, UrlOutcome],
    ) -> None:
        from capy.fetch.errors import FetchError

        with (
            self._client() as client,
            ThreadPoolExecutor(max_workers=min(workers, len(indexes))) as pool,
        ):
            futures: dict[Future, int] = {
                pool.submit(self._fetch_one, client, plans[index]): index for index in indexes
            }
            for future in as_completed(futures):
                index = futures[future]
                try:
                    page, document = future.result()
                except FetchError as exc:
                    outcome = _failed(plans[index], exc)
                except Exception as exc:  # a parser bug must cost one URL, not the whole call
                    outcome = _failed(plans[index], _processing_error(exc, self.workspace.hints))
                else:
                    outcome = self._index(store, plans[index], page, document)
                self._finish(outcomes, index, outcome)

    def _client(self) -> httpx.Client:
        from capy.net.transport import guarded_client

        return guarded_client(
            allow_hosts=self.limits.allow_hosts,
            timeout=self.limits.timeout,
            max_redirects=self.limits.max_redirects,
            ssrf=self.rules.view("security").ssrf,
        )

    def _fetch_one(self, client: httpx.Client, plan: PlannedFetch) -> tuple[FetchedPage, Document]:
        from capy.fetch.document import to_document
        from capy.fetch.http import fetch_page

        binary = self.rules.view("security").binary_content_types
        page = fetch_page(client, plan.url, limits=self.limits, binary=binary)
        return page, to_document(page, shown_url=plan.shown_url, rules=self.rules)

    def _index(
        self, store: Store, plan: PlannedFetch, page: FetchedPage, document: Document
    ) -> UrlOutcome:
        from capy.fetch.cache import mark_fetched, stored_text
        from capy.fetch.errors import FetchError, FetchFailure
        from capy.fetch.outcome import Status, UrlOutcome
        from capy.store.content import ContentError, redact_text
        from capy.store.indexing import index_content

        try:
            result = index_content(
                store,
                document.text,
                label=plan.label,
                kind=self.kind,
                content_type=document.content_type,
                rules=self.rules,
            )
        except ContentError as exc:
            return _failed(plan, FetchError(FetchFailure.NOT_INDEXED, exc.message))
        if result.status == "unchanged":
            mark_fetched(store, result.source_id, int(time.time()))
        redirected = None
        if page.final_url != page.url:
            redirected, _ = redact_text(page.final_url, self.rules.view("secrets"))
        return UrlOutcome(
            plan.shown_url,
            Status.UNCHANGED if result.status == "unchanged" else Status.INDEXED,
            label=plan.label,
            kind=self.kind,
            content_type=result.content_type,
            converted_from_html=document.converted_from_html,
            title=document.title,
            fetched_bytes=len(page.body),
            stored_bytes=result.bytes,
            chunk_count=result.chunk_count,
            preview=self._preview(stored_text(store, result.source_id), result.content_type),
            redirected_to=redirected,
            redactions=sum(result.redactions.values()),
            capped_at=self._cap_if_over(document.text),
        )

    def _cap_if_over(self, text: str) -> int | None:
        cap = self.rules.view("retention").size.max_source_bytes
        return cap if len(text.encode("utf-8")) > cap else None

    def _preview(self, text: str, content_type: str) -> tuple[str, ...]:
        from capy.fetch.preview import preview_lines

        limits = self.rules.view("security").fetch.preview
        return tuple(preview_lines(text, content_type, limits))


def _url_problem(url: str, rules: RuleSet) -> Exception | None:
    """A URL that cannot be fetched at all, found before any connection is made."""
    from capy.fetch.errors import FetchError, FetchFailure
    from capy.net.urls import UrlError, parse_url, url_scheme

    ssrf = rules.view("security").ssrf
    scheme = url_scheme(url)
    if scheme is None or not ssrf.scheme_allowed(scheme):
        allowed = " or ".join(f"{name}://" for name in ssrf.allowed_schemes)
        return FetchError(FetchFailure.INVALID_URL, f"only {allowed} URLs can be fetched")
    try:
        parse_url(url)
    except UrlError as exc:
        return FetchError(FetchFailure.INVALID_URL, str(exc))
    return None


def _failed(plan: PlannedFetch, error: Exception) -> UrlOutcome:
    from capy.fetch.outcome import Status, UrlOutcome

    failure = getattr(error, "failure", None)
    return UrlOutcome(
        plan.shown_url,
        Status.FAILED,
        label=plan.label,
        message=str(error),
        failure=None if failure is None else str(failure),
    )


def _processing_error(exc: Exception, hints: Hints) -> Exception:
    from capy.fetch.errors import FetchError, FetchFailure

    return FetchError(
        FetchFailure.PROCESSING,
        f"capy could not turn the response into text ({type(exc).__name__}); "
        f"{hints.index_file()} if you have it as a file",
    )
