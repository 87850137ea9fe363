"""Intent search over large output: index it, answer the agent's question, leave the rest out.

`capy_execute` with an intent and `capy_batch_execute` hand their output here instead of
returning it. The output is indexed as an ephemeral source (replacing an earlier one of the same
label) and searched with the agent's own words through the retrieval core. The reply carries:
for an intent about failures (the search pack's `intents.failure` words), the errors and
failures the output reports (found by the chunking pack's log rules); for a superlative or
threshold intent, the output's records (or findings whose message holds the measure) sorted
on the field it names (`capy.api.intent_compare`); for an intent asking how many or how a run
ended, the lines where the output sums itself up (`capy.api.intent_tally`); for an intent
naming a day, the lines dated that day (`capy.api.intent_dates`); the matching sections cut
down to the lines that hold the query's words, sections far weaker than the best left out
(`capy.api.intent_focus`); the output's distinctive terms, and the exact call that searches
further. An intent whose words the best section barely holds (below the executor pack's
relevance floor, `capy.api.intent_relevance`), that names an identifier the output never
holds (`capy.api.intent_absent`), or none of whose specific terms (a name general English
does not use, a number, a quoted string) the output holds (`capy.api.intent_specific`), gets
one line instead, unless it is a comparison the records
answer or a failure intent on an output that reports failures: nothing matched, and the
output's distinctive terms. A failure intent on a run that flags nothing and says it ran clean
gets that verdict line alone. Everything shown is read back from the store, so it is redacted.
Sizes come from the executor pack (`limits.output.intent_reply`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from capy.api.intent_absent import unmet_failure_kinds
from capy.api.intent_compare import comparison_section
from capy.api.intent_dates import date_section
from capy.api.intent_focus import shown_hits
from capy.api.intent_relevance import hit_term_shares, source_chunks
from capy.api.intent_shape import is_failure_intent
from capy.api.intent_specific import specific_absence
from capy.api.intent_tally import clean_lines, tally_section
from capy.api.output_excerpts import (
    GAP,
    answer_sections,
    one_line,
    problem_lines,
    reply_budget,
    utf8_size,
)
from capy.api.output_terms import distinctive_terms
from capy.api.printed_sections import printed_result
from capy.units import human_bytes

if TYPE_CHECKING:
    from capy.api.hints import Hints
    from capy.api.workspace import Workspace
    from capy.retrieval import SearchResult
    from capy.rules import RuleSet
    from capy.rules.views.executor import IntentReply
    from capy.store import Store
    from capy.store.indexing import IndexResult

EPHEMERAL = "ephemeral"
HTML = "html"


def intent_reply(
    workspace: Workspace, output: str, *, intent: str, label: str, command: str = ""
) -> str:
    """Index `output` under `label`, search it for `intent`, and describe what matched.
    `command`: the code that printed it, whose words the output need not repeat."""
    from capy.store.content import ContentError

    rules = workspace.rules
    with workspace.store() as store:
        try:
            indexed = _index(store, output, label, rules)
        except ContentError as error:  # binary output, or over a rejecting size cap
            return _not_indexed(output, error.message, workspace.hints)
        workspace.remember_session_source(indexed.source_id)
        result = _search(store, [intent], label, rules)[0]
        chunks = source_chunks(store, indexed.source_id)
        stored, terms = _stored_text(store, indexed.source_id), _terms(store, indexed, rules)
    judged = _judge(chunks, stored, result, intent, rules, also=(output, command))
    if judged.short is not None:
        return judged.render(indexed, stored, terms)
    budget = reply_budget(rules)
    shown_intent = judged.intent
    shown = shown_hits(judged.shares, budget.section_share_of_best)
    lines = [_header(indexed, stored), *_missing_line(judged.missing), *judged.tally]
    lines += judged.compared
    if indexed.content_type == HTML:  # chunks of the converted page, not printed lines
        result = printed_result(stored, result, intent, indexed.label, rules)
        shown = [True] * len(result.hits)
    lines += answer_sections(
        stored,
        [(shown_intent, result)],
        rules,
        list_problems=judged.failure,
        shown_hits=[shown],
        room_share=budget.room_share(judged.relevance),
        label=indexed.label,
    )
    lines += _follow_up(
        terms[: budget.terms_with_sections], [shown_intent], indexed.label, workspace.hints
    )
    return "\n".join(lines).rstrip() + "\n"


def brief_verdict(
    workspace: Workspace, output: str, *, intent: str, label: str, command: str = ""
) -> str | None:
    """For output under the intent threshold, which is otherwise handed back whole: the short
    reply when the intent is judged unanswerable from it (nothing matched, or a failure intent
    on a run that says it ran clean), else None (the output itself is the answer). The output
    is indexed either way, so the follow-up search finds it, and the short reply says what it
    kept back and how to have it. Output no longer than the
    nothing-matched reply itself is never judged: it costs no more to show."""
    from capy.store.content import ContentError

    rules = workspace.rules
    if utf8_size(output) <= reply_budget(rules).nothing_matched_bytes:
        return None
    with workspace.store() as store:
        try:
            indexed = _index(store, output, label, rules)
        except ContentError:
            return None
        workspace.remember_session_source(indexed.source_id)
        result = _search(store, [intent], label, rules)[0]
        chunks = source_chunks(store, indexed.source_id)
        stored, terms = _stored_text(store, indexed.source_id), _terms(store, indexed, rules)
    judged = _judge(chunks, stored, result, intent, rules, also=(output, command))
    # Over an output of a chunk or two a word's rarity says little, so the relevance floor
    # (tuned on long output) would turn away a many-worded question the output answers in its
    # own words. Here only sure signs count: the run says it ran clean, a name the intent asks
    # about is nowhere, every specific word of a short question is nowhere (`django` on a
    # package list, as on long output), or no word of the intent is anywhere. Abbreviations
    # and developer words ("which *repos* are private") are not specific, so their absence is
    # no such sign. A tally-only reply would be a cut of what is shown whole anyway.
    sure = judged.short == _CLEAN or (
        judged.short == _NOTHING and (bool(judged.absent) or judged.relevance == 0)
    )
    if not sure:
        return None
    # The output was short enough to come back whole, and does not: say what was kept back
    # and the two ways to have it.
    lines = stored.count("\n") + 1
    withheld = (
        f"Not shown: its {lines:,} lines ({human_bytes(indexed.bytes)}), "
        f"{workspace.hints.find_indexed(indexed.label, EPHEMERAL)}; "
        f"or run it again {workspace.hints.rerun_without_intent()}."
    )
    return judged.render(indexed, stored, terms, withheld=withheld)


def long_output_reply(workspace: Workspace, output: str, *, label: str) -> str:
    """Index `output` under `label` and show its start, its end and the errors it reports,
    with how to search the rest: the answer to a run without an intent whose output is over
    the executor pack's `index_threshold_bytes`."""
    from capy.api.output_excerpts import head_and_tail
    from capy.store.content import ContentError

    rules = workspace.rules
    with workspace.store() as store:
        try:
            indexed = _index(store, output, label, rules)
        except ContentError as error:
            return _not_indexed(output, error.message, workspace.hints, intent_given=False)
        stored, terms = _stored_text(store, indexed.source_id), _terms(store, indexed, rules)
    shape = rules.view("executor").limits.output.long_output_reply
    head, left_out, tail = head_and_tail(stored, shape.head_bytes, shape.tail_bytes)
    what = f"its first {human_bytes(utf8_size(head))} and last {human_bytes(utf8_size(tail))}"
    lines = [_header(indexed, stored, shown=f"{what}, and the errors it reports")]
    lines += answer_sections(stored, [], rules)
    lines += ["", "### Start of the output", _fenced(head)]
    if left_out:
        skipped = left_out.count("\n")
        lines += [f"{GAP} {human_bytes(utf8_size(left_out))} ({skipped:,} lines) not shown {GAP}"]
    lines += ["", "### End of the output", _fenced(tail)]
    lines += _follow_up(terms, None, indexed.label, workspace.hints)
    return "\n".join(lines).rstrip() + "\n"


def batch_reply(
    workspace: Workspace,
    sections: Sequence[tuple[str, str]],
    *,
    queries: Sequence[str],
    label: str,
) -> str:
    """Index every (section label, output) pair as one source and answer each query from it."""
    from capy.store.content import ContentError

    rules = workspace.rules
    document = _batch_document(sections)
    with workspace.store() as store:
        try:
            indexed = _index(store, document, label, rules)
        except ContentError as error:
            return _not_indexed(document, error.message, workspace.hints)
        workspace.remember_session_source(indexed.source_id)
        results = _search(store, list(queries), label, rules) if queries else []
        stored, terms = _stored_text(store, indexed.source_id), _terms(store, indexed, rules)
    shown = [_redacted(query, rules) for query in queries]
    lines = [_header(indexed, stored, what=f"the output of {len(sections)} commands")]
    lines += ["", "Indexed sections:"]
    lines += [
        f"- `{_redacted(one_line(name), rules)}`: {human_bytes(utf8_size(out))}"
        for name, out in sections
    ]
    if results:
        failure = any(is_failure_intent(query, rules) for query in queries)
        lines += answer_sections(
            stored,
            list(zip(shown, results, strict=True)),
            rules,
            grouped=True,
            list_problems=failure,
        )
    else:
        lines += ["", "No queries were given: search the indexed output with the call below."]
    lines += _follow_up(terms, shown or None, indexed.label, workspace.hints)
    return "\n".join(lines).rstrip() + "\n"


# --- judging the intent against the output ----------------------------------------------------

_CLEAN, _TALLY, _NOTHING = "clean", "tally", "nothing"


@dataclass(frozen=True)
class _Judged:
    """What the reply to an intent rests on: the intent as shown (redacted), whether it is
    about failures, its comparison and summary sections, each hit's term shares, and `short`:
    which one-line reply answers it alone (None when sections do)."""

    intent: str
    failure: bool
    compared: list[str]
    tally: list[str]
    shares: list[list[float]]
    absent: list[str]
    clean: str
    short: str | None
    budget: IntentReply
    relevance: float  # the best hit's (`capy.api.intent_relevance`)
    unmet: list[str]  # kinds of failure asked about that no flagged line is about
    # Specific terms of the intent no chunk holds (`capy.api.intent_specific`): a reply with
    # sections says so first, so lines meeting the intent's other words are not taken for them.
    missing: list[str]
    named: bool  # `absent` holds an identifier the intent names, not only its specific words

    def render(
        self, indexed: IndexResult, stored: str, terms: Sequence[str], *, withheld: str = ""
    ) -> str:
        """`withheld`: a sentence saying what the reply keeps back and how to have it, for
        an output that would otherwise have come back whole."""
        if self.short == _CLEAN:
            return _ran_clean(indexed, self.clean, self.budget)
        if self.short == _TALLY:  # the run's totals answer it though no other line does
            return "\n".join([_header(indexed, stored), *self.tally]) + "\n"
        return _nothing_matched(
            indexed, self.intent, terms, self.budget, absent=self.absent, unmet=self.unmet,
            withheld=withheld,
        )  # fmt: skip


def _judge(
    chunks: Sequence[str],
    stored: str,
    result: SearchResult,
    intent: str,
    rules: RuleSet,
    *,
    also: Sequence[str] = (),
) -> _Judged:
    """`also`: the output as printed (the stored copy is redacted and may be cut) and the
    command that ran, which a term is held by as well before the reply says it is absent."""
    budget = reply_budget(rules)
    shown_intent = _redacted(intent, rules)
    # Errors and failures are listed (and answer whatever the floor says) only for an intent
    # about them: a question about bundle sizes wants the sizes, not the build's error list.
    failure = is_failure_intent(intent, rules)
    compared = comparison_section(stored, shown_intent, rules)
    compared += date_section(stored, shown_intent, rules)
    problems = problem_lines(stored, rules)
    # "Any parsing errors?" on a run whose errors are none about parsing: its error list is
    # not the answer, and `parse.js` in a path does not make the kind asked about present.
    unmet = unmet_failure_kinds(stored, problems, shown_intent, rules) if failure else []
    hits = [hit.content for hit in result.hits]
    shares = hit_term_shares(chunks, hits, intent, rules, unheld=unmet)
    relevances = [sum(row) for row in shares]
    # The stored output is redacted, so a secret in the intent is looked for as redacted.
    # A name it asks about that no chunk holds, or no specific term of it held at all.
    specific = specific_absence(chunks, shown_intent, rules, also=also)
    named = specific.names
    absent = named or (specific.missing if specific.verdict else [])
    weak = bool(absent) or max(relevances, default=0.0) < budget.relevance_floor
    clean = clean_lines(stored, rules) if failure and not problems else []
    tally = tally_section(stored, shown_intent, rules)
    short = None
    if clean:
        short = _CLEAN
    elif weak and not compared and not (failure and problems and not unmet):
        short = _TALLY if tally else _NOTHING
    return _Judged(
        shown_intent, failure, compared, tally, shares, absent, clean[-1] if clean else "",
        short, budget, max(relevances, default=0.0), unmet, specific.missing, bool(named),
    )  # fmt: skip


# --- indexing and search ---------------------------------------------------------------------


def _index(store: Store, text: str, label: str, rules: RuleSet) -> IndexResult:
    from capy.store.indexing import index_content

    return index_content(store, text, label=label, kind=EPHEMERAL, rules=rules)


def _search(store: Store, queries: list[str], label: str, rules: RuleSet) -> list[SearchResult]:
    from capy.store.corpus import search_store

    limit = reply_budget(rules).max_sections
    return search_store(store, queries, limit=limit, kinds=[EPHEMERAL], source=label, rules=rules)


def _stored_text(store: Store, source_id: int) -> str:
    """The output as stored: redacted and capped, so the reply can never show more."""
    from capy.store.codec import decompress_text

    row = store.conn.execute("SELECT raw FROM sources WHERE id = ?", (source_id,)).fetchone()
    return decompress_text(row[0])


def _terms(store: Store, indexed: IndexResult, rules: RuleSet) -> list[str]:
    return distinctive_terms(store, indexed.source_id, rules, limit=reply_budget(rules).max_terms)


def _batch_document(sections: Sequence[tuple[str, str]]) -> str:
    """Markdown with one `## <label>` heading per command, so every chunk carries its command."""
    parts = []
    for section_label, output in sections:
        body = output.rstrip() or "(no output)"
        parts.append(f"## {one_line(section_label)}\n\n```\n{body}\n```\n")
    return "\n".join(parts)


# --- rendering -------------------------------------------------------------------------------


def _not_indexed(text: str, reason: str, hints: Hints, *, intent_given: bool = True) -> str:
    again = f" Run it again {hints.rerun_without_intent()} to get the output itself, capped."
    return (
        f"The output ({human_bytes(utf8_size(text))}) was not indexed, so it cannot be searched: "
        f"{reason}.{again if intent_given else ''}\n"
    )


def _nothing_matched(
    indexed: IndexResult,
    intent: str,
    terms: Sequence[str],
    budget: IntentReply,
    *,
    absent: Sequence[str] = (),
    unmet: Sequence[str] = (),
    withheld: str = "",
) -> str:
    """The short reply for an answer that is not in the output: what was asked, that nothing
    matched (and which names it asks about the output never holds, or which kinds of failure
    none of its errors is about), and as many of the output's terms as fit, for a
    better-worded follow-up. `withheld` replaces the line saying where it was indexed."""
    missing = ", ".join(f"`{name}`" for name in absent)
    kinds = " or ".join(f"`{kind}`" for kind in unmet)
    # Above the size cap the stored copy keeps the output's start and end: say what was
    # searched, not that the whole output lacks it.
    searched = (
        f"the {human_bytes(indexed.bytes)} kept of the output (the size cap cut "
        f"{human_bytes(indexed.omitted_bytes)} from its middle)"
        if indexed.omitted_bytes
        else "the output"
    )
    text = (
        f"Nothing in {searched} matched {json.dumps(intent, ensure_ascii=False)}."
        + (f" It never holds {missing}." if absent else "")
        + (f" None of the errors it reports is about {kinds}." if unmet else "")
        + (
            f" {withheld}"
            if withheld
            else f" {human_bytes(indexed.bytes)} indexed as `{indexed.label}`."
        )
    )
    shown: list[str] = []
    for term in terms:
        line = " Terms: " + ", ".join(f"`{t}`" for t in [*shown, term]) + "."
        if utf8_size(text + line) > budget.nothing_matched_bytes:
            break
        shown.append(term)
    if shown:
        text += " Terms: " + ", ".join(f"`{t}`" for t in shown) + "."
    return text + "\n"


def _missing_line(missing: Sequence[str]) -> list[str]:
    if not missing:
        return []
    return ["", "The output never holds " + ", ".join(f"`{name}`" for name in missing) + "."]


def _ran_clean(indexed: IndexResult, verdict: str, budget: IntentReply) -> str:
    """The short reply to a failure intent on an output that flags no error or failure and
    says its run was clean: that line is the answer."""
    said = json.dumps(one_line(verdict)[: budget.nothing_matched_bytes // 2], ensure_ascii=False)
    return (
        f"The output reports no errors or failures; its summary says {said}. "
        f"{human_bytes(indexed.bytes)} indexed as `{indexed.label}`.\n"
    )


def _header(
    indexed: IndexResult,
    text: str,
    *,
    what: str = "output",
    shown: str = "what matches the intent",
) -> str:
    lines = text.count("\n") + 1
    return (
        f"Indexed {human_bytes(indexed.bytes)} of {what} ({lines:,} lines, {indexed.chunk_count:,} "
        f"sections) as `{indexed.label}` ({EPHEMERAL}); shown: {shown}."
    )


def _fenced(text: str) -> str:
    from capy.api.execute import fenced

    return fenced(text)


def _follow_up(
    terms: Sequence[str], queries: Sequence[str] | None, label: str, hints: Hints
) -> list[str]:
    lines = [""]
    if terms:
        lines.append("Searchable terms: " + ", ".join(f"`{term}`" for term in terms))
    call = hints.search(queries or ["<what you need>"], source=label, kinds=[EPHEMERAL])
    lines.append(f"Search further: `{call}`")
    return lines


def _redacted(text: str, rules: RuleSet) -> str:
    from capy.security.redaction import redact_text

    return redact_text(text, secrets=rules.view("secrets"))
