"""Permission policies: Claude Code's settings rules plus capy's built-in policies.

`check_command` judges a shell command (split into every part a shell would run, and seen
through wrappers such as `timeout`, `sudo` and `bash -c`) or a snippet in another language (its
embedded shell calls); `check_tool` judges a Read/Edit/Write path, a
WebFetch URL or a whole tool. Both return a `Decision`: allow, ask, deny or none, with the rule
and the file that decided. Imports stay inside the functions so a hook pays only for what it uses.
"""

from __future__ import annotations

from capy.lazy import lazy_exports

# Annotations only: a hook reads commands through capy.security's submodules and must not pay
# for pathlib or typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from capy.security.policy import Decision

__all__ = ["Decision", "Outcome", "check_command", "check_tool"]


def check_command(
    command: str,
    *,
    project_dir: Path | None = None,
    language: str = "shell",
    managed_dir: Path | None = None,
    home: Path | None = None,
    ruleset: Any = None,
) -> Decision:
    """Judge a shell command, or the shell calls inside code in another `language`.

    `ruleset` defaults to the packs in force for the project (`capy.rules.load_rules`).
    Raises ValueError for a language capy does not know.
    """
    from capy.rules import load_rules
    from capy.security import policy as rules

    ruleset = ruleset if ruleset is not None else load_rules(project_dir)
    canonical = _language(ruleset, language)
    loaded = rules.load_policy(project_dir, home=home, managed_dir=managed_dir, ruleset=ruleset)
    if canonical == "shell":
        return rules.finish(loaded, rules.judge_shell(loaded, ruleset, command))
    return rules.finish(loaded, _judge_code(loaded, ruleset, command, canonical))


def check_tool(
    tool: str,
    *,
    path: str | Path | None = None,
    url: str | None = None,
    command: str | None = None,
    project_dir: Path | None = None,
    managed_dir: Path | None = None,
    home: Path | None = None,
    ruleset: Any = None,
) -> Decision:
    """Judge one tool call: a path for file tools, a URL for WebFetch, a command for Bash.

    Raises ValueError when the call lacks what its tool needs (a path, a URL, a command).
    """
    from capy.security import policy as rules
    from capy.security.permissions import RULE_TOOLS_FOR

    if tool == "Bash":
        if command is None:
            raise ValueError("a Bash check needs the command to judge")
        return check_command(
            command, project_dir=project_dir, managed_dir=managed_dir, home=home, ruleset=ruleset
        )
    loaded = rules.load_policy(project_dir, home=home, managed_dir=managed_dir, ruleset=ruleset)
    if tool in RULE_TOOLS_FOR:
        if path is None or not str(path).strip():
            raise ValueError(f"a {tool} check needs the path to judge (--path)")
        return rules.finish(loaded, rules.judge_path(loaded, tool, str(path)))
    if tool == "WebFetch":
        if url is None or not url.strip():
            raise ValueError("a WebFetch check needs the URL to judge (--url)")
        return rules.finish(loaded, _judge_url(loaded, url))
    return rules.finish(loaded, rules.judge_whole_tool(loaded, tool))


def _language(ruleset: Any, language: str) -> str:
    name = language.strip().lower()
    found = ruleset.view("executor").by_name.get(name)
    if found is None:
        known = ", ".join(sorted({lang.language for lang in ruleset.view("executor").languages}))
        raise ValueError(f"unknown language {language!r}; capy knows {known}")
    return found.language


def _judge_code(loaded: Any, ruleset: Any, code: str, language: str) -> Decision:
    """The most severe verdict over the literal shell commands the snippet would run."""
    from capy.security.escapes import find_shell_calls
    from capy.security.policy import Decision, Outcome, judge_shell

    calls = find_shell_calls(code, ruleset.view("security").shell_escapes_for(language))
    if not calls:
        return Decision(Outcome.NONE, reason=f"no shell calls found in the {language} code")
    verdicts = []
    for call in calls:
        if call.command is None:
            continue
        verdict = judge_shell(loaded, ruleset, call.command)
        reason = f"shell call found by {call.rule_id}" + (
            f"; {verdict.reason}" if verdict.reason else ""
        )
        verdicts.append(
            Decision(
                verdict.decision, verdict.rule, verdict.source, verdict.part or call.command, reason
            )
        )
    order = [Outcome.DENY, Outcome.ASK, Outcome.NONE, Outcome.ALLOW]
    opaque = len(verdicts) < len(calls)
    for outcome in order:
        for verdict in verdicts:
            if verdict.decision is outcome and not (outcome is Outcome.ALLOW and opaque):
                return verdict
    return Decision(
        Outcome.NONE,
        reason=f"{len(calls) - len(verdicts)} shell call(s) run a command that is not a literal; "
        "capy cannot judge them before they run",
    )


def _judge_url(loaded: Any, url: str) -> Decision:
    from urllib.parse import urlsplit

    from capy.security.policy import Decision, Outcome, judge_host

    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        host = None
    if not host:
        return Decision(Outcome.DENY, part=url, reason="the URL does not parse, so it is refused")
    return judge_host(loaded, host.rstrip(".").lower())


__getattr__ = lazy_exports(
    __name__, {"Decision": "capy.security.policy", "Outcome": "capy.security.policy"}
)
