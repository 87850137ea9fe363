"""Capsules as hooks write them, for memory tests."""

from __future__ import annotations

from capy.capsules import CapsuleDraft


def prompt(session: str, text: str, at: str) -> CapsuleDraft:
    return CapsuleDraft("prompt", text, "hook", {"session_id": session}, created_at=at)


def call(session: str, command: str, output: str, at: str, *, failed: bool = False) -> CapsuleDraft:
    content = f"Bash\ninput: command: {command}\noutput: {output}"
    metadata = {"session_id": session, "tool": "Bash", "command": command}
    return CapsuleDraft(
        "error" if failed else "tool_call", content, "hook", metadata, created_at=at
    )


def push_episode(session: str, day: int | None = None) -> list[CapsuleDraft]:
    """A rejected push, a rebase and a push that worked; on May `day`, or today when None."""
    if day is None:
        from datetime import UTC, datetime

        at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:0")
    else:
        at = f"2026-05-{day:02d}T10:00:0"
    return [
        prompt(session, "push the login-form branch", at + "0Z"),
        call(
            session,
            "git push origin login-form",
            " ! [rejected] login-form -> login-form (non-fast-forward)",
            at + "1Z",
            failed=True,
        ),
        call(session, "git pull --rebase origin login-form", "Successfully rebased", at + "2Z"),
        call(session, "git push origin login-form", "3f2a1c9..8be41d0", at + "3Z"),
    ]
