"""Which lines of a long output an intent reply shows, within the executor pack's budget.

Errors and failures come first (the chunking pack's log rules find them; those holding the
query's rarer words lead), then the search hits' best lines, chosen across all hits at once:
a line scores by the query terms it holds, each weighted by its rarity among the hits and over
the output's lines (`capy.api.line_weights`), so the word every hit shares (`test` in a test
run) counts little yet not nothing, and a word found only inside another counts a share. The
first-ranked hit always shows its best line. The lines around the chosen ones follow, nearest
first, while room is left. A long line that is a JSON record or an array of them is shown as
records (`capy.api.record_lines`).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from capy.api.excerpt_selection import GAP, Selection, one_line, section_title, utf8_size
from capy.chunking.pieces import text_line_starts

if TYPE_CHECKING:
    from capy.api.excerpt_context import Surrounded
    from capy.retrieval import SearchResult
    from capy.retrieval.matching import TermPattern
    from capy.rules import RuleSet
    from capy.rules.views.executor import IntentReply


def reply_budget(rules: RuleSet) -> IntentReply:
    return rules.view("executor").limits.output.intent_reply


def answer_sections(
    stored: str,
    results: list[tuple[str, SearchResult]],
    rules: RuleSet,
    *,
    grouped: bool = False,
    list_problems: bool = True,
    shown_hits: Sequence[Sequence[bool]] | None = None,
    room_share: float = 1.0,
    label: str = "",
) -> list[str]:
    """Errors first (the ones the queries name first), then each query's sections; `results`
    pairs each query as shown (redacted) with what the search found for it. Without
    `list_problems` (an intent not about failures) errors are neither listed nor favoured.
    `shown_hits`, per query, says which hits may show lines (all when None); every hit still
    counts when the query's words are weighed. `label`: the source's (`section_title`)."""
    budget = reply_budget(rules)
    seen: set[str] = set()  # lines already in the reply: overlapping chunks repeat them
    whole = Excerpt(stored, rules)
    ranked = [
        (query, result, _ranked_hits(result, whole, rules, list_problems))
        for query, result in results
    ]
    problems = _problem_anchors(whole, _relevance_by_text(ranked), budget) if list_problems else []
    lines: list[str] = []
    room = int(budget.max_reply_bytes * len(results) * room_share)
    if problems:
        room_for_problems = budget.max_problem_bytes
        selection = Selection([whole], room_for_problems, seen, budget, cap=room_for_problems)
        body = selection.bodies(problems)[0]
        lines += ["", "### Errors and failures in the output", body]
        room -= utf8_size(body)
    for number, (query, result, (excerpts, weights)) in enumerate(ranked):
        if grouped:
            lines += ["", f"## {query}"]
        shown = shown_hits[number] if shown_hits is not None else None
        lines += _sections(
            query, result, excerpts, weights, seen, room // len(results), budget, shown, label
        )
    return lines


def reports_problems(stored: str, rules: RuleSet) -> bool:
    """Whether the output holds lines of the severities the reply lists (errors, failures)."""
    return bool(problem_lines(stored, rules))


def problem_lines(stored: str, rules: RuleSet) -> list[str]:
    """The lines of the severities the reply lists (errors, failures), each message once."""
    whole = Excerpt(stored, rules)
    return [whole.lines[line] for line in sorted(whole.problems)]


def _ranked_hits(
    result: SearchResult, whole: Excerpt, rules: RuleSet, flagged: bool = True
) -> tuple[list[Excerpt], list[tuple[TermPattern, float]]]:
    from capy.api.excerpt_context import surrounded

    budget = reply_budget(rules)
    # An intent about failures gets the flagged lines in the whole output's context already
    # (`_problem_anchors`); its hits keep to their chunks.
    before, after = (0, 0) if flagged else (budget.context_lines_before, budget.context_lines_after)
    if budget.block_continuation is None:
        before = after = 0
    continuation = re.compile(budget.block_continuation or "$^")
    excerpts = []
    reach = (before, max(after, budget.block_lines_after) if after else 0)
    identity = re.compile(budget.record_identity) if budget.record_identity else None
    for hit in result.hits:
        around = surrounded(hit.content, whole.text, whole.starts, reach, continuation)
        named: dict[int, int] = {}
        if identity is not None:
            around, named = _with_identities(around, whole, identity, budget.record_identity_reach)
        excerpt = Excerpt(around.text, rules, flagged=flagged, core=around.core)
        excerpt.block = continuation if after else None
        excerpt.identity = named
        excerpts.append(excerpt)
    return excerpts, _term_weights(excerpts, whole, result.query, rules)


def _with_identities(
    around: Surrounded, whole: Excerpt, pattern: re.Pattern[str], reach: int
) -> tuple[Surrounded, dict[int, int]]:
    """`around` grown to take in the identity line of each record its chunk's lines belong to
    (`capy.api.record_identity`), and line -> its record's identity line, both counted in the
    grown text."""
    from capy.api.excerpt_context import Surrounded
    from capy.api.record_identity import record_identities

    if around.lines is None:
        return around, {}
    top, bottom = around.lines
    first = top + around.text.count("\n", 0, around.core[0])
    last = top + around.text.count("\n", 0, max(around.core[1] - 1, around.core[0]))
    named = record_identities(whole.lines, first, last, pattern, reach)
    if not named:
        return around, {}
    start = min(top, *named.values())
    end = max(bottom, *named.values())
    if (start, end) != (top, bottom):
        shift = whole.starts[top] - whole.starts[start]
        stop = max(
            whole.starts[top] + len(around.text),
            whole.starts[end] + len(whole.lines[end]),
        )
        core = (around.core[0] + shift, around.core[1] + shift)
        around = Surrounded(whole.text[whole.starts[start] : stop], core, (start, end))
    return around, {line - start: name - start for line, name in named.items()}


def _relevance_by_text(
    ranked: list[tuple[str, SearchResult, tuple[list[Excerpt], list[tuple[TermPattern, float]]]]],
) -> dict[str, float]:
    """Line text -> the best query-term score it has in any hit of any query. Read off the
    hits (a few chunks) rather than by matching every flagged line of the output, which can
    hold tens of thousands of them."""
    best: dict[str, float] = {}
    for _query, _result, (excerpts, weights) in ranked:
        for excerpt in excerpts:
            for line, score in excerpt.term_scores(weights).items():
                text = excerpt.lines[line].strip()
                best[text] = max(best.get(text, 0.0), score)
    return best


def _problem_anchors(
    whole: Excerpt, relevance: dict[str, float], budget: IntentReply
) -> list[tuple[float, int, int]]:
    """The flagged lines worth listing: those the search hits show holding the queries'
    rarer words first, then errors before failures, then in order; at most
    `max_problem_lines`."""
    scored = [
        (relevance.get(whole.lines[line].strip(), 0.0) + _flag_bonus(severity), 0, line)
        for line, severity in whole.problems.items()
    ]
    scored.sort(key=lambda item: (-item[0], item[2]))
    return scored[: budget.max_problem_lines]


def _sections(
    query: str,
    result: SearchResult,
    excerpts: list[Excerpt],
    weights: list[tuple[TermPattern, float]],
    seen: set[str],
    room: int,
    budget: IntentReply,
    shown: Sequence[bool] | None = None,
    label: str = "",
) -> list[str]:
    """The hits' best lines, chosen across all of them at once (the right line may sit in the
    third hit), shown under each hit's title in rank order. `query` is the query as shown
    (redacted)."""
    if not result.hits:
        return ["", f"Nothing in the output matched {json.dumps(query, ensure_ascii=False)}."]
    anchors = [
        (score, index, line)
        for index, excerpt in enumerate(excerpts)
        for score, line in excerpt.scored(weights)
        if shown is None or shown[index]
    ]
    scored = anchors
    # A line holding only words the output is full of (`test` in a test run) tells the lines
    # apart no better than a random one: context at most, unless nothing rarer matched.
    if any(score > 0 for score, _, _ in anchors):
        floor = budget.line_weights.min_anchor_share * max(score for score, _, _ in anchors)
        anchors = [anchor for anchor in anchors if anchor[0] > 0 and anchor[0] >= floor]
    else:
        anchors = [(score + 1.0, index, line) for score, index, line in anchors]
    if budget.line_weights.top_hit_line:
        anchors = _top_hit_first(excerpts, anchors, scored)
    titles = [section_title(hit.title, label) for hit in result.hits]
    selection = Selection(excerpts, room, seen, budget, titles=titles)
    lines: list[str] = []
    for title, body in zip(titles, selection.bodies(anchors), strict=True):
        if body:
            lines += ["", f"### {one_line(title)}", body]
    if not lines:
        lines = ["", "The matching sections hold nothing beyond what is shown above."]
    return lines


def _top_hit_first(
    excerpts: list[Excerpt],
    anchors: list[tuple[float, int, int]],
    scored: list[tuple[float, int, int]],
) -> list[tuple[float, int, int]]:
    """`anchors` with the first-ranked hit's best line ahead of all others (its first line
    with text when no line of it matched): search ranked that section first, so the reply
    never leaves it empty. Its best line is taken from all its `scored` lines, those below
    the anchor floor too: the floor is set by the best line of any hit, and a word that
    names the thing asked about but fills the output (`tar` in a `du` listing of tar's
    files) weighs little beside a word that matched by chance elsewhere."""
    if not excerpts:
        return anchors
    own = [anchor for anchor in scored if anchor[1] == 0]
    if own:
        # Of lines holding the same words, the one with the fewest others names the thing
        # asked about most closely: `712K node_modules/tar` for "the tar package", not
        # `328K node_modules/tar/dist/esm` printed above it.
        lines = excerpts[0].lines
        best = max(own, key=lambda anchor: (anchor[0], -_word_count(lines[anchor[2]]), -anchor[2]))
    else:
        line = next((n for n, text in enumerate(excerpts[0].lines) if text.strip()), None)
        if line is None:
            return anchors
        best = (0.0, 0, line)
    top = max((anchor[0] for anchor in anchors), default=0.0) + 1.0
    return [(top, 0, best[2]), *(anchor for anchor in anchors if anchor != best)]


def _word_count(text: str) -> int:
    from capy.retrieval.query import WORD_PART

    return len(WORD_PART.findall(text))


def _term_weights(
    excerpts: list[Excerpt], whole: Excerpt, query: str, rules: RuleSet
) -> list[tuple[TermPattern, float]]:
    """Each query term with its weight (`capy.api.line_weights`): rare among the hits and
    over the output's lines says most, common to both says little, and none says nothing."""
    from capy.api.line_weights import line_term_weights
    from capy.retrieval.matching import compile_terms
    from capy.retrieval.query import parse_query

    patterns = compile_terms(parse_query(query, rules.view("search")).terms)
    for excerpt in excerpts:
        excerpt.match(patterns)
    held = [sum(1 for excerpt in excerpts if excerpt.spans[term]) for term in range(len(patterns))]
    rarity = line_term_weights(held, len(excerpts), whole.text, whole.starts, patterns)
    weights = list(zip(patterns, rarity, strict=True))
    for excerpt in excerpts:
        excerpt.weights = weights
    return weights


class Excerpt:
    """A text by lines, with where the query's words and the errors sit in it."""

    def __init__(
        self,
        text: str,
        rules: RuleSet,
        *,
        flagged: bool = True,
        core: tuple[int, int] | None = None,
    ) -> None:
        self.text = text
        # The characters of `text` that can anchor lines (a hit's own chunk); the rest is
        # context (`capy.api.excerpt_context`).
        self.core = core if core is not None else (0, len(text))
        self.flagged = flagged  # whether its errors and failures count
        self.rules = rules
        self.budget = reply_budget(rules)
        self.lines = text.split("\n")
        self.starts = text_line_starts(text)
        self.spans: list[list[tuple[int, int]]] = []
        self.first_match: dict[int, int] = {}  # line -> offset of its first match in the line
        self.weights: list[tuple[TermPattern, float]] = []  # set once the query is weighed
        # Line -> the line naming its record (`capy.api.record_identity`), shown with it.
        self.identity: dict[int, int] = {}
        self._clipped: dict[int, str] = {}
        # Lines that continue a block (the pack's `block_continuation`), when an anchor opening
        # one shows its block; None when it does not.
        self.block: re.Pattern[str] | None = None

    @cached_property
    def problems(self) -> dict[int, int]:
        """Line -> severity rank (0 error, 1 failure, 2 warning) for each flagged message."""
        if not self.flagged:
            return {}
        first = bisect_right(self.starts, self.core[0]) - 1
        last = bisect_right(self.starts, max(self.core[1] - 1, self.core[0])) - 1
        flagged = _flagged(self.text, self.lines, self.rules)
        return {line: rank for line, rank in flagged.items() if first <= line <= last}

    def match(self, patterns: tuple[TermPattern, ...]) -> None:
        from capy.retrieval.matching import term_spans

        first, last = self.core
        self.spans = [
            [span for span in spans if first <= span[0] < last]
            for spans in term_spans(self.text, patterns)
        ]

    def term_scores(self, weights: list[tuple[TermPattern, float]]) -> dict[int, float]:
        """Line -> the weights of the distinct query terms it holds (lines holding any), each
        term counted once per line at its best match (a whole word over a substring)."""
        from capy.api.line_weights import match_weight, phrase_bonus

        shape = self.budget.line_weights
        by_line: dict[int, dict[int, float]] = {}
        for term, spans in enumerate(self.spans):
            pattern, rarity = weights[term]
            for span in spans:
                line = bisect_right(self.starts, span[0]) - 1
                held = by_line.setdefault(line, {})
                weight = match_weight(
                    self.text, span, rarity, shape.substring_factor,
                    spelled=pattern.substrings, stem_factor=shape.stem_factor,
                )  # fmt: skip
                held[term] = max(held.get(term, 0.0), weight)
                offset = span[0] - self.starts[line]
                self.first_match[line] = min(self.first_match.get(line, offset), offset)
        # Words side by side as the query puts them (`phrase_bonus`) add to the line's score.
        bonus = phrase_bonus(self.starts, self.spans, by_line, shape.phrase_factor)
        return {line: sum(held.values()) + bonus.get(line, 0.0) for line, held in by_line.items()}

    def scored(self, weights: list[tuple[TermPattern, float]]) -> list[tuple[float, int]]:
        """(score, line): the term score, plus about one for an error or failure."""
        scores = self.term_scores(weights)
        for line, severity in self.problems.items():
            scores[line] = scores.get(line, 0.0) + _flag_bonus(severity)
        return [(score, line) for line, score in scores.items()]

    def clip(self, line: int) -> str:
        """A long line shown as its records when it is JSON (`capy.api.record_lines`), else cut
        to `max_line_bytes` around its first match (a long log line), else from its start."""
        if line not in self._clipped:
            self._clipped[line] = self._clip(line)
        return self._clipped[line]

    def _clip(self, line: int) -> str:
        text, cap = self.lines[line].rstrip(), self.budget.max_line_bytes
        if utf8_size(text) > cap and self.weights:
            from capy.api.record_lines import record_view

            shown = record_view(text, self.weights, self.rules)
            if shown is not None:
                return shown
        data = text.encode("utf-8")
        if len(data) <= cap:
            return text
        shown = self._windows(line, text)
        if shown is not None:
            return shown
        first = len(text[: self.first_match.get(line, 0)].encode("utf-8"))
        start = max(0, min(first - cap // 3, len(data) - cap))
        piece = data[start : start + cap].decode("utf-8", "ignore")
        return (GAP if start else "") + piece + (GAP if start + cap < len(data) else "")

    def _windows(self, line: int, text: str) -> str | None:
        """The line as windows around its rarest matches (`capy.api.line_windows`)."""
        from capy.api.line_windows import line_windows

        begin = self.starts[line]
        end = begin + len(text)
        matches = [
            (start - begin, stop - begin, self.weights[term][1])
            for term, spans in enumerate(self.spans)
            if term < len(self.weights)
            for start, stop in spans
            if begin <= start < end
        ]
        shape = self.budget.long_lines
        return line_windows(
            text,
            matches,
            windows=shape.windows,
            window_bytes=shape.window_bytes,
            first_bytes=self.budget.max_line_bytes,
        )

    def join(self, numbers: list[int]) -> str:
        out, previous = [], None
        for number in numbers:
            if previous is not None and _gap(self.lines, previous, number):
                out.append(GAP)
            out.append(self.clip(number))
            previous = number
        return "\n".join(out)


def _flag_bonus(severity: int) -> float:
    """What a flagged line adds to its score: about one query word, errors a little more."""
    return 1.1 - 0.1 * severity


def _gap(lines: list[str], previous: int, number: int) -> bool:
    """Whether lines other than blank ones were left out between two shown lines."""
    return any(lines[n].strip() for n in range(previous + 1, number))


def _flagged(text: str, lines: list[str], rules: RuleSet) -> dict[int, int]:
    """Lines the chunking pack's log rules flag with a severity the reply lists (the first line
    of each distinct message) -> the severity's rank, worst first."""
    from capy.chunking.flagging import SEVERITY_RANK, flagged_lines

    listed = {SEVERITY_RANK[severity] for severity in reply_budget(rules).problem_severities}
    flagged = flagged_lines(text, rules.view("chunking").log)
    rank = {line: severity for line, severity in flagged.items() if severity in listed}
    seen: set[str] = set()
    chosen: dict[int, int] = {}
    for line in sorted(rank, key=lambda n: (rank[n], n)):
        message = lines[line].strip()
        if message and message not in seen:
            seen.add(message)
            chosen[line] = rank[line]
    return chosen


def head_and_tail(text: str, head_bytes: int, tail_bytes: int) -> tuple[str, str, str]:
    """(head, the middle left out, tail) of `text`: at most `head_bytes` from its start and
    `tail_bytes` from its end, each cut at a line boundary unless a single line is longer."""
    data = text.encode("utf-8")
    head_end = min(head_bytes, len(data))
    if head_end < len(data):
        newline = data.rfind(b"\n", 0, head_end)
        head_end = newline + 1 if newline >= 0 else head_end
    tail_start = max(len(data) - tail_bytes, head_end)
    if tail_start > head_end:
        newline = data.find(b"\n", tail_start - 1, len(data) - 1)
        tail_start = newline + 1 if newline >= 0 else tail_start
    parts = data[:head_end], data[head_end:tail_start], data[tail_start:]
    # A cut inside a character drops its broken bytes rather than showing U+FFFD.
    return tuple(part.decode("utf-8", "ignore") for part in parts)  # type: ignore[return-value]
