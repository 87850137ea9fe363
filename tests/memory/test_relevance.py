"""Which records a prompt brings back: enough stems shared with what a record says, or the task
it was learned in asked for again; one weak word of each is not enough."""

from __future__ import annotations

import os

from memory_helpers import prompt

from capy.memory import learn
from capy.memory.digest import read_digest
from capy.memory.inject import relevant

NOW = 1_777_939_200.0  # 2026-05-05


def _digest(store, project) -> dict:
    [path] = learn(store, now=NOW).digests
    return read_digest(os.path.dirname(os.path.dirname(path)), str(project))


def _texts(digest: dict, said: str) -> list[str]:
    return [record["text"] for record in relevant(digest, said)]


def test_a_record_needs_its_own_stems_or_its_task_again(store, project):
    store.write(
        [
            prompt("s1", "the users table needs the new column", "2026-05-01T10:00:00Z"),
            prompt(
                "s1",
                "Don't run migrations on main, create a branch database with `make db-branch`.",
                "2026-05-01T10:00:01Z",
            ),
            prompt("s2", "release the parser crate", "2026-05-02T10:00:00Z"),
            prompt(
                "s2",
                "I told you to always do `cargo publish --dry-run` first, let me publish myself.",
                "2026-05-02T10:00:01Z",
            ),
        ]
    )
    digest = _digest(store, project)
    migrations, publish = (
        "Don't run migrations on main, create a branch database with `make db-branch`.",
        "I told you to always do `cargo publish --dry-run` first, let me publish myself.",
    )
    assert _texts(digest, "run the migrations on main") == [migrations]
    # The same task again: two of the task's three stems, none of the record's own words.
    assert _texts(digest, "release the lexer crate") == [publish]
    # "make" (the record's own `make`) and "table" (its task's): one weak hint of each.
    assert _texts(digest, "make the table rows clickable") == []


def test_the_prompt_part_of_the_digest_ranks_as_the_full_digest_does(store, project):
    from memory_helpers import push_episode

    from capy.memory.digest import PROMPT

    store.write(push_episode("s1", 1))
    store.write(
        [
            prompt("s2", "release the parser crate", "2026-05-02T10:00:00Z"),
            prompt(
                "s2",
                "I told you to always do `cargo publish --dry-run` first, let me publish myself.",
                "2026-05-02T10:00:01Z",
            ),
        ]
    )
    [path] = learn(store, now=NOW).digests
    data_dir = os.path.dirname(os.path.dirname(path))
    full = read_digest(data_dir, str(project))
    part = read_digest(data_dir, str(project), PROMPT)
    assert part is not None and "wrappers" not in part
    gate = full["prompt"]["min_confidence"]
    counted: dict[str, int] = {}
    for record in full["records"]:
        if record["confidence"] >= gate:
            for term in record["terms"]:
                counted[term] = counted.get(term, 0) + 1
    assert part["frequency"] == counted
    for said in ("push the login-form branch", "publish the parser crate", "center the card"):
        assert _texts(part, said) == _texts(full, said)
    assert _texts(part, "publish the parser crate")
