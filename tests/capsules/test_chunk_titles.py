"""The chunk stage's titles: every chunk repeats its capsule's label, so the label stays short."""

from __future__ import annotations

from capy.capsules import CapsuleDraft
from capy.capsules.pipeline import drain

# A commit whose message runs to many lines, and output long enough for several chunks.
MESSAGE = "feat: trace hook controllers\n\n" + "\n".join(
    f"- wrap action {n} in the spotter.hook.action_{n} span" for n in range(40)
)
OUTPUT = "\n\n".join(f"[check {n}]\n" + "warning: unused alias Tracer\n" * 30 for n in range(6))


def test_a_long_command_is_cut_in_every_chunk_title_and_named_once(capsules):
    command = f'git add -A && git commit -m "{MESSAGE}"'
    capsules.write(
        [
            CapsuleDraft(
                kind="error",
                content=f"$ {command}\n\n{OUTPUT}",
                source="hook",
                metadata={"session_id": "s1", "tool": "Bash", "command": command},
            )
        ]
    )
    drain(capsules)
    chunking = capsules.rules.view("chunking")
    titles = [row[0] for row in capsules.conn.execute("SELECT title FROM capsule_chunks")]
    assert len(titles) > 2
    for title in titles:
        assert len(title) <= chunking.titles.max_chars
        assert title.startswith("error Bash git add -A && git commit -m")
        assert title.count("git commit") == 1  # the label once, not again as the chunk's own
        assert "action_39" not in title  # the message's tail stays in the content only
    content = " ".join(
        row[0] for row in capsules.conn.execute("SELECT content FROM capsule_chunks")
    )
    assert "spotter.hook.action_39" in content


def test_every_chunk_of_a_long_result_names_the_call_it_came_from(capsules):
    report = "\n\n".join(
        f"## Package {n}\n" + f"- latest version 1.{n}.0, released in October\n" * 20
        for n in range(6)
    )
    capsules.write(
        [
            CapsuleDraft(
                kind="tool_call",
                content=f"Task general-purpose subagent: Check hex package versions\n\n{report}",
                source="hook",
                metadata={"session_id": "s1", "tool": "Task"},
            )
        ]
    )
    drain(capsules)
    titles = [row[0] for row in capsules.conn.execute("SELECT title FROM capsule_chunks")]
    assert len(titles) > 2
    for title in titles:
        assert title.startswith("tool call Task general-purpose subagent: Check hex package")
