"""What memory says at each hook, from the digest alone (no database, no rule loading):
- SessionStart: the project's anti-patterns, preferences and principles, most confident first.
- UserPromptSubmit: the records most relevant to the prompt, or nothing when none is.
- PreToolUse: the blocking anti-pattern a command breaks, if any (capy.memory.blocking).

Relevance is lexical: the prompt's stems (porter, as the search core stems) against each
record's, weighted by inverse document frequency over the records, normalised by the weight of
the prompt's known stems; a record must share `min_shared_terms` distinct stems and reach the
relevance floor. Every text fits its token budget (characters / chars_per_token)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HEADER = "capy memory (learned in earlier sessions; confidence in brackets):"


def session_start_text(digest: dict[str, Any]) -> tuple[str, list[str]]:
    budget = digest["session_start"]
    wanted = set(budget["types"])
    chosen = [
        record
        for record in digest["records"]
        if record["type"] in wanted and record["confidence"] >= budget["min_confidence"]
    ]
    chosen = _distinct(sorted(chosen, key=lambda record: (-record["confidence"], record["id"])))
    return _fit(chosen[: budget["max_records"]], budget["max_tokens"], digest)


def prompt_text(part: dict[str, Any], prompt: str) -> tuple[str, list[str]]:
    """What UserPromptSubmit says for `prompt`, from the digest's prompt part (`prompt_part`)."""
    ranked = _distinct(relevant(part, prompt))
    budget = part["prompt"]
    return _fit(ranked[: budget["max_records"]], budget["max_tokens"], part)


def _line(text: str, key: str) -> list[str]:
    """The values of `key`'s line in a text of lines (capy.memory.prompt_index), or []."""
    start = text.find(f"\n{key} ")
    if start < 0:
        return []
    start += len(key) + 2
    return text[start : text.index("\n", start)].split()


def _stems_in(words: str, stems: set[str]) -> set[str]:
    """The stems a text of words (" stem stem ... ", capy.memory.prompt_index) holds."""
    return {stem for stem in stems if f" {stem} " in words}


def part_records(part: dict[str, Any], ids: Any = None) -> list[dict[str, Any]]:
    """The prompt part's records (those at `ids`, or all), loaded."""
    import marshal

    stored = part["records"]
    return [marshal.loads(stored[i]) for i in (range(len(stored)) if ids is None else ids)]


def relevant(part: dict[str, Any], prompt: str) -> list[dict[str, Any]]:
    """The records of the digest's prompt part (`prompt_part`) relevant to `prompt`, best first."""
    from capy.memory.words import folded, pairs_of, stem_sequence

    budget = part["prompt"]
    if not part["records"]:
        return []
    synonyms = part.get("synonyms", "")
    sequence = folded(stem_sequence(prompt), lambda key: next(iter(_line(synonyms, key)), None))
    words = set(sequence)
    stopwords = _stems_in(part["stopwords"], words)
    query = words - stopwords
    phrases = pairs_of(sequence, stopwords)
    boost = budget.get("phrase_boost", 0.0)
    postings = {term: _line(part["postings"], term) for term in query}
    # The programs the prompt's words go with (the entity graph learned from the records) join
    # the query at a lower weight: "run the rust tests" is about cargo.
    graph = part["graph"]
    links = {term: _line(graph, term) for term in query}
    linked = {program for programs in links.values() for program in programs} - query
    implied = budget.get("standing_implied", False)
    linked_weight = budget.get("graph_weight", 0.0)
    other = budget.get("unanchored_weight", 1.0)
    by_count = part["idf_by_count"]
    frequency = {term: len(ids) for term, ids in postings.items() if ids}
    frequency.update({term: len(_line(part["postings"], term)) for term in linked})
    idf = {term: by_count[frequency[term]] for term in query if term in frequency}
    possible = sum(idf.values())
    if not possible:
        return []
    # The prompt's stems no record holds dilute what it shares: "rename the master branch to
    # main in the README badges" is about badges, not about the records holding branch and main.
    unknown = len(query) - len(idf)
    possible += budget.get("unknown_weight", 0.0) * by_count[0] * unknown
    common = _stems_in(part["common"], query)
    frequent = _stems_in(part.get("frequent", ""), query)
    # A program's name says which tool, not which task: "count the lines of Go code" is not
    # "lint the go code" asked for again, though it shares two of that task's three stems.
    programs = _stems_in(part.get("programs", ""), query)
    standing_types = budget.get("standing_types", ())
    standing_need = budget.get("standing_shared_terms", 1)
    need = budget["min_shared_terms"]
    mixed = budget.get("mixed_shared_terms", need)
    overlap = budget.get("task_overlap", 0.5)
    # Only a record sharing a stem with the prompt can be relevant: only those are loaded.
    candidates = sorted({int(i) for ids in postings.values() for i in ids})
    scored = []
    for record in part_records(part, candidates):
        terms = record["terms"]
        shared = query & terms
        if not shared:
            continue
        via_graph = linked & terms if linked_weight else set()
        anchors = record["anchors"]
        # Relevant: the prompt shares enough stems with what the record says (its text, commands,
        # entities), or asks for the task it was learned in again, or holds more stems of both
        # with one of what it says. One word of each ("make" from `make db-branch`, "table" from
        # its task) is two weak hints, not one strong one. A stem most records hold ("fail",
        # from every rule's "When ... fails with") adds weight below but is not counted here: it
        # tells no record from another. Nor, among these, is one most records hold ("run", the
        # verb of nearly every command learned from: pack `said_common_share`).
        counted = shared - common
        task_only = record["task_only"]
        said_stems = counted.difference(task_only)
        said = len(said_stems)
        standing = record["type"] in standing_types and (
            bool(query & record.get("corrected", frozenset()))
            or _standing(record, query, counted & anchors, task_only, standing_need)
            or (implied and _implied_action(record, links, query))
        )
        if not (
            standing
            or len(said_stems - frequent) >= need
            or (said and len(counted - frequent) >= mixed)
            or _same_task(counted - programs, record["task_terms"], need, overlap)
        ):
            continue
        # At least one shared stem must name what the record is about (a command, an entity,
        # its task), not only words of an error message.
        if budget["anchored"] and not shared & anchors:
            continue
        # Words side by side in both ("cargo test") say more than the same words apart.
        together = len(phrases & record["pairs"])
        # A stem only the error message holds is weaker evidence than one the record is about.
        weight = sum(idf[term] * (1.0 if term in anchors else other) for term in shared)
        weight += linked_weight * sum(by_count[frequency[term]] for term in via_graph)
        weight *= 1 + boost * together
        if weight / possible < budget["relevance_floor"] and not standing:
            continue
        scored.append((weight * (0.5 + record["confidence"]), record))
    scored.sort(key=lambda pair: (-pair[0], pair[1]["id"]))
    return [record for _, record in scored]


# A standing record the user said against a command ("no, use pnpm here" after `npm install
# zod`) applies wherever the prompt names that command's program ("add lodash-es with npm"),
# with no other shared stem: the correction is about that program.


def _standing(
    record: dict[str, Any], query: set[str], said: set[str], task_only: frozenset[str], need: int
) -> bool:
    """A standing instruction applies: the prompt names its program ("rerun pytest on the
    integration folder" for "always run pytest with -x") and `need` more stems of what it says,
    not only of the task it was learned in."""
    programs = record.get("programs", frozenset())
    return bool(programs & query) and len(said.difference(programs, task_only)) >= need


def _implied_action(record: dict[str, Any], links: dict[str, list[str]], query: set[str]) -> bool:
    """A standing instruction applies where the prompt implies its program and names the action
    it pairs with it: "apply the updated configmap to the cluster" is `kubectl apply` when other
    records learned "cluster" beside kubectl, and "From now on, run kubectl diff before any
    kubectl apply" holds the pair. The word that implies the program must not be the record's
    own: its own words beside its own program say nothing the shared stems do not."""
    terms = record["terms"]
    programs = record.get("programs", frozenset()).intersection(
        program for term, found in links.items() if term not in terms for program in found
    )
    pairs = record["pairs"]
    return any(f"{program} {term}" in pairs for program in programs for term in query)


def _same_task(shared: set[str], task: Any, need: int, overlap: float) -> bool:
    """The prompt asks for the task again: `need` of its stems, and `overlap` of them."""
    again = shared.intersection(task)
    return len(again) >= need and len(again) >= overlap * len(task)


def _distinct(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first record of each text: an extractive principle says what its most central member
    says, and the two must not take two of the few slots."""
    seen: set[str] = set()
    kept = []
    for record in records:
        if record["text"] not in seen:
            seen.add(record["text"])
            kept.append(record)
    return kept


def _fit(
    records: list[dict[str, Any]], max_tokens: int, digest: dict[str, Any]
) -> tuple[str, list[str]]:
    if not records:
        return "", []
    limit = max_tokens * digest["chars_per_token"]
    lines = [HEADER]
    shown = []
    for record in records:
        label = f"{record['type']} {record['confidence']:.2f}"
        line = f"- [{label}] {record['text']} (memory {record['id'][:8]})"
        if len("\n".join([*lines, line])) > limit:
            break
        lines.append(line)
        shown.append(record["id"])
    return ("\n".join(lines), shown) if shown else ("", [])
