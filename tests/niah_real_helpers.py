"""Asking an intent of the niah-real set the way an agent does, for tests built on its dev half."""

from __future__ import annotations

import shlex
from pathlib import Path

from capy.api.execute import execute_code
from capy.api.workspace import Workspace
from capy.bench.niah_real_set import load_real_set

SET = Path(__file__).parents[1] / "fixtures" / "niah-real"


def dev_intent(intent_id: str):
    """(output, intent) of a dev-half intent; an intent of the held-back half is refused, so no
    test tunes on it."""
    for output in load_real_set(SET).outputs:
        for intent in output.intents:
            if intent.intent_id == intent_id:
                assert output.half == "dev", f"{intent_id} is on the held-back half"
                return output, intent
    raise AssertionError(f"no intent {intent_id} in the set")


def ask(project_dir: Path, intent_id: str, kind: str):
    """(reply text, intent) of `capy_execute`'s library call on `cat` of the intent's output;
    only dev-half intents, so no test tunes on the held-back half."""
    for output in load_real_set(SET).outputs:
        for intent in output.intents:
            if intent.intent_id == intent_id:
                assert intent.kind == kind, f"{intent_id} is not a {kind} intent"
                assert output.half == "dev", f"{intent_id} is on the held-back half"
                code = f"cat {shlex.quote(str(output.path.resolve()))}"
                workspace = Workspace(project_dir)
                reply = execute_code(workspace, language="shell", code=code, intent=intent.intent)
                return reply.text, intent
    raise AssertionError(f"no intent {intent_id} in the set")
