"""Intent replies on HTML output quote the lines the program printed, on a real pydoc page.

The chunking pack converts HTML to markdown before chunking, so the search hits of a page are
not lines of the output, and pydoc's table layout converts to a few lines of many KB each: the
reply could only show byte windows of them, and the signature an intent asked for was cut away.
The reply now shows blocks of the printed lines, ranked by the intent's words; and a line that
spells the asked word as asked (`chunked`) outranks its stem's relatives (`chunk_ranges`).
Everything runs for real: `capy_execute`'s library call on `cat` of the captured page, a real
encrypted store, the reply as the agent reads it. Only dev-half intents of the set are used.
"""

from __future__ import annotations

import pytest

from tests.niah_real_helpers import ask


@pytest.mark.parametrize(
    "intent_id",
    [
        "pydoc-boltons-iterutils-01",  # the parameters of backoff
        "pydoc-boltons-iterutils-02",  # signature of chunked, under lines about chunk_ranges
        "pydoc-boltons-iterutils-03",  # remap's default callbacks, deep in its signature
    ],
)
def test_a_page_is_answered_with_its_printed_lines(project_dir, intent_id):
    text, intent = ask(project_dir, intent_id, "positive")
    assert all(needle in text for needle in intent.needles), text
    assert len(text.encode("utf-8")) <= 5000
