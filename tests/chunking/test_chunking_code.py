"""Code: one chunk per definition with leading comments, short ones merged, windows otherwise."""

from __future__ import annotations

from capy.chunking import chunk_text


def test_python_definitions(chunk, checks, fixture_text, snapshot):
    chunks = chunk("scheduler.py")
    checks.lines_kept(fixture_text("scheduler.py"), chunks)
    assert [c.title for c in chunks] == snapshot


def test_decorators_and_comments_travel_with_their_definition(chunk, checks):
    chunks = chunk("scheduler.py")
    (entry,) = checks.containing(chunks, "class Entry:")
    assert entry.content.startswith("@dataclass(order=True)\nclass Entry:")
    (due,) = checks.containing(chunks, "def due(self)")
    assert "# Skipped runs are dropped rather than replayed" in due.content


def test_go_doc_comments_and_receivers(chunk, checks):
    chunks = chunk("lease.go")
    assert [c.title for c in chunks][1:] == [
        "Manager",
        "Lease",
        "NewManager",
        "Acquire",
        "Complete",
    ]
    (acquire,) = [c for c in chunks if c.title == "Acquire"]
    assert acquire.content.startswith("// Acquire gives the job to worker")


def test_language_from_the_label_limits_the_rules(rules):
    text = (
        "def helper(x):\n    return x\n\n\nsetup(name='pkg')\n\n\n"
        "def main():\n    run()\n    return 0\n"
    )
    as_python = [c.title for c in chunk_text(text, label="setup.py", rules=rules)]
    assert "setup" not in " ".join(as_python)  # the C-function rule does not run on Python


def test_code_without_definitions_uses_windows(rules):
    text = "\n".join(f"x{n} = {n}" for n in range(130))
    chunks = chunk_text(text, label="values.py", rules=rules)
    assert chunks[0].title == f"values.py (lines 1-{rules.code.window_lines})"


def test_long_definition_is_windowed_under_its_name(rules, checks):
    body = "\n".join(f"    total += compute_value_{n}(items, factor={n})" for n in range(400))
    text = f"def accumulate(items):\n    total = 0\n{body}\n    return total\n"
    chunks = chunk_text(text, label="acc.py", rules=rules)
    checks.well_formed(chunks)
    assert len(chunks) > 1 and {c.title for c in chunks} == {"accumulate"}
    checks.lines_kept(text, chunks)
