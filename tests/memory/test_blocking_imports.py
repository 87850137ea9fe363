"""A command a blocking anti-pattern denies costs a hook about what an allowed one does: the
deny path reads commands with the security engine's splitter and wrapper reader from the
blocking digest's plain data, and imports none of what the lean hook start avoids.

Deterministic where a timing is not (`capy bench memory` gives the figures): a real hook
process started as `capy setup` registers it, its imports read from `python -X importtime`.
"""

from __future__ import annotations

import json
import re
import subprocess

from capy.capsules import CapsuleDraft
from capy.memory import learn
from capy.setup.launcher import hook_launcher, resolve_launcher

# What the lean start spares a hook (capy.entry.run_lean, capy.packregex, capy.hooks.compiled):
# `re` alone costs about a bare interpreter start, dataclasses pulls in inspect and ast.
AVOIDED = ("re", "typing", "dataclasses", "inspect", "ast", "shlex", "enum", "pathlib")
AVOIDED += ("pydantic", "pydantic_core", "capy.rules.views", "capy.rules.matchers", "math")


def _hook(project, command: str, importtime: bool = False) -> tuple[dict, set[str]]:
    event = {"tool_name": "Bash", "tool_input": {"command": command}}
    return _event(project, "PreToolUse", event, importtime)


def _event(project, name: str, event: dict, importtime: bool) -> tuple[dict, set[str]]:
    argv = [*hook_launcher(resolve_launcher()), "hook", "--platform", "claude-code", name]
    if importtime:
        argv.insert(1, "-Ximporttime")
    payload = {"session_id": "s2", "cwd": str(project), "hook_event_name": name, **event}
    done = subprocess.run(
        argv, input=json.dumps(payload).encode(), capture_output=True, cwd=project, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    stderr = done.stderr.decode()
    names = set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)$", stderr, re.M))
    return (json.loads(done.stdout) if done.stdout.strip() else {}), names


def test_a_denied_command_imports_nothing_the_lean_start_avoids(project, store):
    from datetime import UTC, datetime

    said = "Never run `git push --force` here, it rewrote main."
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    store.write([CapsuleDraft("prompt", said, "hook", {"session_id": "s1"}, created_at=now)])
    learn(store)
    for command in ("timeout 5 git push --force", "git status"):
        _hook(project, command)  # compiles what later hooks read from their caches
    denied, imported = _hook(project, "timeout 5 git push --force", importtime=True)
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "capy.security.wrappers" in imported  # judged through the wrappers
    assert not imported.intersection(AVOIDED), sorted(imported.intersection(AVOIDED))
    allowed, _ = _hook(project, "git commit -m 'never git push --force'")
    assert allowed.get("hookSpecificOutput", {}).get("permissionDecision") != "deny"


def test_a_prompt_given_memory_imports_nothing_the_lean_start_avoids(project, store):
    """UserPromptSubmit ranks the records from the digest's prompt part with string methods:
    no `math` (idf comes precomputed), no `itertools`, and none of the above."""
    from datetime import UTC, datetime

    said = "Always run pytest with -x so it stops at the first failure."
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    store.write([CapsuleDraft("prompt", said, "hook", {"session_id": "s1"}, created_at=now)])
    learn(store)
    event = {"prompt": "run pytest with the first failure stopping it"}
    _event(project, "UserPromptSubmit", event, importtime=False)  # fills the caches
    answer, imported = _event(project, "UserPromptSubmit", event, importtime=True)
    assert said in answer["hookSpecificOutput"]["additionalContext"]
    assert "capy.memory.inject" in imported
    avoided = {*AVOIDED, "itertools"}
    assert not imported.intersection(avoided), sorted(imported.intersection(avoided))
