"""A hit's chunk shown with the lines that continue its block past the chunk's edges.

Chunks cut output at a size: `onnxruntime`'s last dependency in a real `pipdeptree` run falls
into the next chunk, and the comment explaining `is_removed` sits above the YAML key whose
chunk matched; a tree node's dependency twelve lines down is beyond plain context, so a line that
opens a block shows the block under it. Real captured outputs of the niah-real set's dev half.
"""

from __future__ import annotations

import re
import shlex

import pytest

from capy.api.excerpt_context import surrounded
from capy.api.execute import execute_code
from capy.api.workspace import Workspace
from capy.chunking.pieces import text_line_starts
from capy.rules import load_rules
from tests.niah_real_helpers import dev_intent


@pytest.mark.parametrize(
    "intent_id",
    [
        "pipdeptree-capy-venv-02",  # the node's last child sits in the next chunk
        "gcloud-yaml-command-schema-05",  # the comment above the key whose chunk matched
        "pipdeptree-capy-venv-03",  # a node opens its block: its children come under it
        "git-log-stat-capy-02",  # a commit's message, one blank line under its header chunk
        # The comment above a key ranked, not the key: the comment opens the key's block.
        "gcloud-yaml-command-schema-04",
    ],
)
def test_the_block_past_a_chunk_edge_reaches_the_reply(project_dir, intent_id):
    output, intent = dev_intent(intent_id)
    code = f"cat {shlex.quote(str(output.path.resolve()))}"
    reply = execute_code(Workspace(project_dir), language="shell", code=code, intent=intent.intent)
    assert all(needle in reply.text for needle in intent.needles), reply.text


def _continuation() -> re.Pattern[str]:
    pattern = load_rules().view("executor").limits.output.intent_reply.block_continuation
    assert pattern is not None
    return re.compile(pattern)


def test_a_tree_node_gets_its_children_and_no_next_node():
    output, _ = dev_intent("pipdeptree-capy-venv-02")
    whole = output.path.read_text(encoding="utf-8")
    start = whole.index("onnxruntime==")
    chunk = whole[start : whole.index("\n", start) + 1]  # the node line alone
    shown = surrounded(chunk, whole, text_line_starts(whole), (4, 6), _continuation())
    lines = shown.text.split("\n")
    assert lines[0].startswith("onnxruntime==")
    assert [line.split()[1] for line in lines[1:]] == [
        "flatbuffers", "numpy", "packaging", "protobuf",
    ]  # fmt: skip
    assert shown.text[shown.core[0] : shown.core[1]] == chunk


def test_text_that_is_not_a_slice_of_the_output_stays_as_it_is():
    whole = "a\n  b\n  c\n"
    starts = text_line_starts(whole)
    for chunk in ("## heading\na", "b\n", ""):  # not found, not at a line start, blank
        shown = surrounded(chunk, whole, starts, (4, 6), _continuation())
        assert (shown.text, shown.core) == (chunk, (0, len(chunk)))


def test_a_block_goes_on_past_one_blank_line_when_the_next_line_continues_it():
    output, _ = dev_intent("git-log-stat-capy-02")
    whole = output.path.read_text(encoding="utf-8")
    header = whole[: whole.index("\n\n") + 1]  # `commit`, `Author:`, `Date:`: a chunk of its own
    shown = surrounded(header, whole, text_line_starts(whole), (4, 6), _continuation())
    lines = shown.text.split("\n")
    assert lines[3] == ""
    assert lines[4].startswith("    ") and lines[4].strip()  # the subject, indented
    assert shown.text[shown.core[0] : shown.core[1]] == header


def test_a_blank_line_before_a_line_of_another_shape_ends_the_block():
    whole = "a\n  b\n\nc\n  d\n"
    shown = surrounded("a\n", whole, text_line_starts(whole), (4, 6), _continuation())
    assert shown.text == "a\n  b"
