"""A heading printed again over each of a finding's messages is shown again with each one.

pydocstyle prints a finding's place over every message about it (`patches.py:52 in public
function `resolve_path`:` four times, one message indented under each). The reply showed each
line once, so the three later copies of the heading counted as repeats: they were no anchors,
and the message under the fourth sat past the context of the first. Real captured output of
the niah-real set (dev half) through `capy_execute`'s library call.
"""

from __future__ import annotations

from tests.niah_real_helpers import ask


def test_each_message_under_a_repeated_heading_is_shown(project_dir):
    text, intent = ask(project_dir, "pydocstyle-wrapt-02", "positive")
    assert intent.needles[0] in text, text
    heading = "src/wrapt/patches.py:52 in public function `resolve_path`:"
    # Shown again over the message it heads, and not again by an overlapping section.
    assert f"{heading}\n{' ' * 8}{intent.needles[0]}" in text, text
    assert text.count(heading) <= 4, text
