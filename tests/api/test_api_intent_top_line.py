"""The first-ranked section's best line reaches the reply even when another section's chance
match sets a higher bar (issue #17, failure class 2: line weights on small result sets).

`du` of a node_modules tree prints tar's size on a line of its own among a dozen lines about
tar's files: "tar" fills the hits, so it weighs little, while "package" meets
`validate-npm-package-name` in a weaker section and set the anchor floor above every tar
line. The section search ranked first then showed its first line, not the answer. A real
captured output of the niah-real set's dev half, asked through `capy_execute`'s library call.
"""

from __future__ import annotations

from tests.niah_real_helpers import ask


def test_the_top_sections_closest_line_is_shown_under_a_floor_set_elsewhere(project_dir):
    text, intent = ask(project_dir, "du-npm-node-modules-03", "positive")
    assert all(needle in text for needle in intent.needles), text
