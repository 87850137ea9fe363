"""Does a plain text read as prose: sentences wrapped into lines, as an abstract or a report is?

Line windows suit tool output, where a line is an event and an answer sits in a few of them.
Wrapped prose is different: its lines end where a word wrap fell, and an abstract of 25 wrapped
lines is one statement. Cut into 20-line windows, its evidence is split between two chunks that
bm25 scores apart (each with part of the terms) and that take two of a page's result slots. So
a short plain text that reads as wrapped prose is kept as one chunk, the unit a reader and bm25
both score.

Reading as wrapped prose is measured, not guessed from a label:
- most whitespace-separated tokens are words (the pack's `word_pattern`: letters, maybe wrapped
  in sentence punctuation), and lines hold several of them on average: listings, logs, tables
  and stack traces fail this; and sentences hold function words ("the", "of", "to": the
  pack's `function_words`), which a linter's or a listing's lines of words mostly lack;
- most lines that run on into another line end mid-sentence (not on the pack's
  `sentence_end_pattern`): a line per utterance or per message (a chat log, a list of
  sentences) is a sequence of events, where windows keep each answer small.
"""

from __future__ import annotations

from capy.rules.views.chunking import Prose

_PUNCTUATION = ".,;:!?()[]\"'"


def reads_as_prose(lines: list[str], rules: Prose) -> bool:
    tokens = words = function = filled = runs_on = ended = 0
    for index, line in enumerate(lines):
        parts = line.split()
        if not parts:
            continue
        filled += 1
        tokens += len(parts)
        words += sum(1 for part in parts if rules.word.fullmatch(part))
        function += sum(1 for part in parts if part.strip(_PUNCTUATION).lower() in rules.words)
        if index + 1 < len(lines) and lines[index + 1].strip():
            runs_on += 1  # a paragraph's last line ends a sentence in any prose; not counted
            ended += rules.sentence_end.search(line) is not None
    if not filled or tokens / filled < rules.min_words_per_line:
        return False
    wordy = words >= rules.min_word_share * tokens
    wordy = wordy and function >= rules.min_function_word_share * tokens
    return wordy and ended <= rules.max_sentence_end_share * runs_on
