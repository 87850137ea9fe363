"""Superlative and threshold intents over tabular output, answered by sorting or filtering.

"Which day had the most rain", "the module with the lowest coverage", "requests over 500 ms":
no word of the answer is in the question, so a text search cannot find it. When the intent
holds a superlative or a threshold (the search pack's `intents.compare`), the output's records
are read (a CSV, a whitespace table under a header line such as a coverage report, a JSON array
of records, an XML report's elements), the numeric field the intent names is chosen (a header
or key sharing a word with the intent or its alias group, else the superlative's own field
words), and the top rows are shown verbatim under the header, sorted or filtered on that field.
A superlative of how often ("most often", "most common") with no field naming it counts the
messages the output prints instead (`capy.api.intent_compare_frequency`).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from capy.api.intent_shape import intent_stems, intent_words, stems_of

if TYPE_CHECKING:
    from capy.rules import RuleSet
    from capy.rules.views.intents import Compare

# A number as a cell holds it: `1,387`, `-7.1`, `85%`, `69.19 kB`, `120ms`.
_NUMBER = re.compile(r"^([-+]?\d[\d,]*\.?\d*|[-+]?\.\d+)\s*(%|[a-zA-Zµ]{1,3})?$")
# A counted word inside a record: `28 files changed`, `1,387 insertions(+)`.
_COUNTED = re.compile(r"\b(\d[\d,]*)\s+([A-Za-z]+)")
_SEPARATOR = re.compile(r"^[\s=+|:-]+$")
_DELIMITERS = (",", "\t", ";", "|")
# A column counts as numeric when this share of its rows hold a number.
_NUMERIC_SHARE = 0.6
# Prefix matches shorter than this (`id` in `idle`) say nothing.
_MIN_PREFIX = 4
# A listing's columns (`capy.api.intent_compare_listing`) are named so, with their number.
UNNAMED = "column"


@dataclass
class _Table:
    header: str  # the header line as printed ("" for JSON records)
    columns: list[str]
    rows: list[tuple[str, list[str]]] = field(default_factory=list)  # (line shown, cells)
    # Per row of a multi-line record: column -> the line holding its value, shown under it.
    details: list[dict[int, str]] = field(default_factory=list)
    records: list[dict] = field(default_factory=list)  # per row of JSON records, the record


@dataclass(frozen=True)
class _Ask:
    descending: bool
    hints: frozenset[str]  # stems the superlative implies (`hottest`: temp, max)
    names: list[frozenset[str]]  # per intent word, the stems naming its field (alias group)
    threshold: float | None = None
    top: int | None = None
    # The name groups in the order a field is looked for when only messages hold it: those
    # after the superlative ("the most *arguments*") nearest first, then those before it.
    nearest: tuple[frozenset[str], ...] = ()


def comparison_section(stored: str, intent: str, rules: RuleSet) -> list[str]:
    """Markdown lines answering a superlative or threshold intent from the output's records,
    or [] when the intent is not one or no numeric field of the output fits it."""
    compare = rules.view("search").intents.compare
    ask = _parse(intent, compare, rules)
    if ask is None:
        return []
    best: tuple[float, int, _Table, int] | None = None
    for table in _tables(stored, compare):
        for column in _numeric_columns(table):
            score = _column_score(table.columns[column], ask)
            if score > 0 and (best is None or score > best[0]):
                best = (score, -len(table.rows), table, column)
    if best is None:
        from capy.api.intent_compare_messages import message_table

        found = message_table(stored, ask, compare)
        if found is not None:
            return _render(found, 0, ask, compare)
        return _how_often(stored, intent, ask, compare)
    _, _, table, column = best
    return _render(table, column, ask, compare)


def _how_often(stored: str, intent: str, ask: _Ask, compare: Compare) -> list[str]:
    """ "Most often", "most common": the messages the output prints most times, counted."""
    from capy.api.intent_compare_frequency import asks_how_often, frequency_rows, frequency_section

    if ask.threshold is not None or not asks_how_often(intent, compare):
        return []
    rows = frequency_rows(stored, compare)
    return frequency_section(rows, ask.descending, compare) if rows else []


def _parse(intent: str, compare: Compare, rules: RuleSet) -> _Ask | None:
    stems = intent_stems(intent)
    lower = " ".join(re.findall(r"[a-z0-9.%]+", intent.lower()))
    descending, hints, used = None, set(), set()
    for superlative in compare.superlatives:
        words = stems_of(superlative.words)
        if any(stem in words for stem in stems):
            if descending is None:
                descending = superlative.order == "desc"
            hints |= stems_of(superlative.fields)
            used |= words
    threshold = None
    for rule in compare.thresholds:
        for words in rule.words:
            found = re.search(rf"\b{re.escape(words)} (-?\d[\d,]*\.?\d*)\s*([a-z%]*)", lower)
            if found and threshold is None:
                threshold = float(found.group(1).replace(",", ""))
                descending = rule.op == "gt" if descending is None else descending
                hints |= stems_of((found.group(2),)) if found.group(2) else set()
                used |= {stem for w in words.split() for stem in stems_of((w,))}
    if descending is None:
        return None
    top = re.search(r"\btop (\d{1,2})\b", lower)
    ignored = rules.view("search").stopwords.all
    aliases = [stems_of(group) for group in compare.field_aliases]
    names, before, after, passed = [], [], [], False
    for word, stem in zip(intent_words(intent), stems, strict=True):
        if stem in used:
            passed = True
        if stem in used or word in ignored or word.isdigit():
            continue
        group = {stem}
        for alias in aliases:
            if stem in alias:
                group |= alias
        names.append(frozenset(group))
        (after if passed else before).append(frozenset(group))
    nearest = (*after, *reversed(before))
    count = int(top[1]) if top else None
    return _Ask(descending, frozenset(hints), names, threshold, count, nearest)


def _column_score(name: str, ask: _Ask) -> float:
    """Two for each intent word naming the column, one for each superlative field word; a
    listing's unnamed column (its only numeric one) a half, for a superlative alone."""
    if name.startswith(UNNAMED):
        return 0.5 if ask.threshold is None else 0.0
    tokens = intent_stems(name)
    score = 2.0 * sum(1 for group in ask.names if any(_meets(t, group) for t in tokens))
    return score + sum(1.0 for hint in ask.hints if any(_meets(t, {hint}) for t in tokens))


def _meets(token: str, stems: frozenset[str] | set[str]) -> bool:
    for stem in stems:
        if token == stem:
            return True
        short, long = sorted((token, stem), key=len)
        if len(short) >= _MIN_PREFIX and long.startswith(short):
            return True
    return False


# --- reading records ---------------------------------------------------------------------------


def _tables(stored: str, compare: Compare) -> list[_Table]:
    records = _json_records(stored)
    if records is not None:
        return [records] if len(records.rows) >= compare.min_rows else []
    from capy.api.intent_compare_xml import xml_tables

    elements = xml_tables(stored, compare)
    if elements:
        return elements
    lines = stored.split("\n")
    delimited = _delimited(lines, compare)
    if delimited is not None:
        return [delimited]
    blocks = _blocks(lines, compare)
    tables = ([blocks] if blocks is not None else []) + _whitespace_tables(lines, compare)
    if tables:
        return tables
    from capy.api.intent_compare_listing import listing

    return listing(lines, compare)


def _blocks(lines: list[str], compare: Compare) -> _Table | None:
    """Records of several lines, each opening with a line the pack's `record_starts` match
    (`commit <hash>` in `git log --stat`); a block's fields are its counted words (`28 files
    changed`: `files` is 28). A record shows as its first line and the line holding the value."""
    starts = [re.compile(pattern) for pattern in compare.record_starts]
    if not starts:
        return None
    records: list[list[str]] = []
    for line in lines:
        if any(start.match(line) for start in starts):
            records.append([line.rstrip()])
        elif records:
            records[-1].append(line.rstrip())
    if len(records) < compare.min_rows:
        return None
    # Keyed by stem, so `1 file changed` and `28 files changed` are one field.
    counted = [
        {
            intent_stems(word)[0]: (count, line)
            for line in record
            for count, word in _COUNTED.findall(line)
        }
        for record in records
    ]
    columns = list(dict.fromkeys(word for fields in counted for word in fields))
    table = _Table("", columns)
    for record, fields in zip(records, counted, strict=True):
        table.rows.append(
            (record[0], [fields[word][0] if word in fields else "" for word in columns])
        )
        table.details.append(
            {column: fields[word][1] for column, word in enumerate(columns) if word in fields}
        )
    return table


def _delimited(lines: list[str], compare: Compare) -> _Table | None:
    """A CSV (or TSV) whose first line is its header: most lines split into as many fields."""
    body = [line for line in lines if line.strip()]
    if len(body) <= compare.min_rows:
        return None
    for delimiter in _DELIMITERS:
        columns = _split(body[0], delimiter)
        if len(columns) < 2 or any(_number(cell) is not None for cell in columns):
            continue
        rows = [
            (line, cells)
            for line in body[1:]
            if len(cells := _split(line, delimiter)) == len(columns)
        ]
        if len(rows) >= compare.min_rows and len(rows) >= 0.8 * (len(body) - 1):
            return _Table(body[0], columns, rows)
    return None


def _split(line: str, delimiter: str) -> list[str]:
    return [cell.strip() for cell in next(csv.reader([line], delimiter=delimiter), [])]


def _whitespace_tables(lines: list[str], compare: Compare) -> list[_Table]:
    """Tables under a header line of words (a coverage report, `pip list`): the rows that
    follow with about as many whitespace-separated cells, separator lines skipped."""
    tables, number = [], 0
    while number < len(lines):
        columns = lines[number].split()
        if len(columns) < 3 or not all(_is_name(cell) for cell in columns):
            number += 1
            continue
        table, number = _Table(lines[number].rstrip(), columns), number + 1
        while number < len(lines):
            line = lines[number]
            if line.strip() and _SEPARATOR.match(line):
                number += 1
                continue
            cells = line.split()
            # A line opening with a rule (`== 2 passed in 1s ==`) is the next part, not a row.
            if len(cells) < len(columns) - 1 or not any(ch.isalnum() for ch in cells[0]):
                break
            head = cells[: len(columns) - 1]
            table.rows.append((line.rstrip(), [*head, " ".join(cells[len(columns) - 1 :])]))
            number += 1
        if len(table.rows) >= compare.min_rows:
            tables.append(table)
    return tables


def _is_name(cell: str) -> bool:
    return any(ch.isalpha() for ch in cell) and _number(cell) is None


def _json_records(stored: str) -> _Table | None:
    """A JSON array of objects (or an object holding one): keys are the columns. A record of a
    top-level array shows as its own text in the output (its lines as printed); one nested
    deeper shows as one line of JSON."""
    text = stored.strip()
    if not text.startswith(("[", "{")):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    verbatim = _record_texts(text) if isinstance(data, list) else None
    if isinstance(data, dict):
        lists = [value for value in data.values() if isinstance(value, list)]
        data = max(lists, key=len) if lists else None
    if not isinstance(data, list):
        return None
    if verbatim is None or len(verbatim) != len(data):
        verbatim = [json.dumps(record, ensure_ascii=False) for record in data]
    records = [(record, shown) for record, shown in zip(data, verbatim, strict=True)]
    records = [(record, shown) for record, shown in records if isinstance(record, dict)]
    columns = list(dict.fromkeys(key for record, _ in records for key in record))
    table = _Table("", columns)
    for record, shown in records:
        table.rows.append((shown, [_cell(record.get(key)) for key in columns]))
        table.records.append(record)
    return table


def _record_texts(text: str) -> list[str] | None:
    """The source text of each element of the top-level JSON array `text`, in order."""
    decoder = json.JSONDecoder()
    texts, at = [], 1
    while True:
        at = _skip(text, at, " \t\r\n,")
        if at >= len(text) or text[at] == "]":
            return texts
        try:
            _, end = decoder.raw_decode(text, at)
        except ValueError:
            return None
        texts.append(text[at:end])
        at = end


def _skip(text: str, at: int, chars: str) -> int:
    while at < len(text) and text[at] in chars:
        at += 1
    return at


def _cell(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return ""
    return str(value) if isinstance(value, (int, float, str)) else ""


def _number(cell: str, units: Mapping[str, float] | None = None) -> float | None:
    """The number a cell holds, times its unit's factor in `units` when given and listed."""
    found = _NUMBER.match(cell.strip())
    if not found:
        return None
    try:
        value = float(found.group(1).replace(",", ""))
    except ValueError:
        return None
    unit = (found.group(2) or "").lower()
    return value * units[unit] if units and unit in units else value


def _numeric_columns(table: _Table) -> list[int]:
    numeric = []
    for column in range(len(table.columns)):
        held = sum(
            1
            for _, cells in table.rows
            if column < len(cells) and _number(cells[column]) is not None
        )
        if table.rows and held >= _NUMERIC_SHARE * len(table.rows):
            numeric.append(column)
    return numeric


# --- rendering --------------------------------------------------------------------------------


def _render(table: _Table, column: int, ask: _Ask, compare: Compare) -> list[str]:
    summary = set(compare.summary_rows)
    valued = []
    for position, (line, cells) in enumerate(table.rows):
        value = _number(cells[column], compare.units) if column < len(cells) else None
        if value is None or (cells and cells[0].lower().rstrip(":") in summary):
            continue
        if ask.threshold is not None and not _passes(value, ask):
            continue
        if table.details and column in table.details[position]:
            line = f"{line}\n{table.details[position][column]}"
        if table.records and len(line.encode("utf-8")) > compare.max_row_bytes:
            line = _compact(table.records[position], table.columns[column])
        valued.append((value, position, line))
    if not valued:
        return []
    valued.sort(key=lambda item: (-item[0] if ask.descending else item[0], item[1]))
    top = min(ask.top or compare.top_rows, len(valued))
    name = table.columns[column]
    order = "highest first" if ask.descending else "lowest first"
    what = f"{len(valued):,} rows" + (
        f" {'over' if ask.descending else 'under'} {ask.threshold:g}"
        if ask.threshold is not None
        else ""
    )
    lines = ["", f"### Sorted by `{name}`, {order} (top {top} of {what})"]
    if table.header:
        lines.append(_clip(table.header, compare.max_row_bytes))
    lines += [
        "\n".join(_clip(part, compare.max_row_bytes) for part in line.split("\n"))
        for _, _, line in valued[:top]
    ]
    return lines


def _compact(record: dict, key: str) -> str:
    """A long record as one line of JSON: the compared field first, then its other plain
    fields (nested ones left out), for the clip to keep what identifies it."""
    fields = {key: record.get(key)} | {
        k: v for k, v in record.items() if k != key and not isinstance(v, (dict, list))
    }
    return json.dumps(fields, ensure_ascii=False)


def _passes(value: float, ask: _Ask) -> bool:
    assert ask.threshold is not None
    return value > ask.threshold if ask.descending else value < ask.threshold


def _clip(line: str, cap: int) -> str:
    data = line.encode("utf-8")
    return line if len(data) <= cap else data[:cap].decode("utf-8", "ignore") + "…"
