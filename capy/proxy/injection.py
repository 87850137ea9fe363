"""`--inject-recall BUDGET`: a recall brief (capy.capsules.recall) for the user's last message,
added to a chat request as a system message just before that message.

Placed there, not first: the conversation's opening stays byte for byte what it was, so an
upstream's prompt cache of the history still holds, and the brief sits next to the question it
answers. When nothing in the capsule log is relevant the request goes as it came (a brief that
says "nothing matched" would only cost tokens). Recall runs on a thread of its own with its own
connection to the log, never on the event loop; any failure sends the request unchanged, with
one line on stderr. The brief is never recorded: the recorder sees the client's own request.

Recall reads what the pipeline has derived, so the proxy runs the pipeline's background worker
while it injects (capy.capsules.pipeline.background), as `capy serve` does.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from capy.proxy.capsule_log import ThreadCapsuleLog
from capy.proxy.messages import message_text

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from capy.rules.ruleset import RuleSet

USER_ROLE = "user"
# How long a stopping proxy waits for a recall in progress before it closes the connection.
CLOSE_SECONDS = 10
BRIEF_ROLE = "system"


class RecallInjector:
    def __init__(self, project_dir: Path, rules: RuleSet, budget: int, log: Callable[[str], None]):
        self._project_dir = project_dir
        self.budget = budget
        self._log = log
        self._capsule_log = ThreadCapsuleLog(project_dir, rules)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="capy-recall")
        self._pipeline: Any = None
        self.injected = 0

    def start(self) -> None:
        from capy.capsules.pipeline.background import BackgroundPipeline

        self._pipeline = BackgroundPipeline(self._project_dir).start()

    def close(self) -> None:
        """Stop the pipeline worker and close recall's connection; at exit, never raising."""
        with suppress(Exception):
            if self._pipeline is not None:
                self._pipeline.stop()
        with suppress(Exception):
            self._executor.submit(self._capsule_log.close).result(timeout=CLOSE_SECONDS)
        self._executor.shutdown(wait=False)

    async def amend(self, body: bytes) -> bytes:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._amended, body)

    def _amended(self, body: bytes) -> bytes:
        try:
            request = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return body  # not ours to read: the upstream says what is wrong with it
        messages = request.get("messages") if isinstance(request, dict) else None
        if not isinstance(messages, list):
            return body
        last = _last_user_message(messages)
        if last is None:
            return body
        query = message_text(messages[last], "")
        if not query.strip():
            return body
        try:
            brief = self._brief(query)
        except Exception as problem:  # recall must never cost the request
            detail = getattr(problem, "message", None) or type(problem).__name__
            self._log(f"no recall brief was added ({detail})")
            return body
        if brief is None:
            return body
        messages.insert(last, {"role": BRIEF_ROLE, "content": brief})
        self.injected += 1
        return json.dumps(request, ensure_ascii=False).encode("utf-8")

    def _brief(self, query: str) -> str | None:
        from capy.capsules.recall import recall

        result = recall(self._capsule_log.store(), query, budget_tokens=self.budget)
        return result.brief if result.items else None


def _last_user_message(messages: list[Any]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, dict) and message.get("role") == USER_ROLE:
            return index
    return None
