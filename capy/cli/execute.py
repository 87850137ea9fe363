"""`capy execute LANGUAGE [CODE | -]`: run a snippet through the sandbox, print what it printed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

from cyclopts import Parameter


def execute(
    language: str,
    code: Annotated[str, Parameter(allow_leading_hyphen=True)] = "-",
    /,
    *,
    timeout: Annotated[float | None, Parameter(name="--timeout")] = None,
    intent: Annotated[str | None, Parameter(name="--intent")] = None,
    background: Annotated[bool, Parameter(name="--background", negative=())] = False,
    network: Annotated[str | None, Parameter(name="--network")] = None,
    as_json: Annotated[bool, Parameter(name="--json", negative=())] = False,
    yes: Annotated[bool, Parameter(name="--yes", negative=())] = False,
    show_secrets: Annotated[bool, Parameter(name="--show-secrets", negative=())] = False,
) -> int:
    """Run code in a sandboxed subprocess and print its output, or for long output what the
    agent would get: the output indexed, and its errors and the parts you asked for printed.

    The exit code is the program's own (128 + N when signal N ended it).

    Parameters
    ----------
    language
        A language of the executor pack (python, shell, javascript, ...) or one of its
        aliases (py, sh, bash, js, ...).
    code
        The code to run; `-` or nothing reads it from standard input.
    timeout
        Seconds before the run is stopped (default and ceiling come from the executor pack).
    intent
        What you are looking for in the output. Output over the executor pack's
        intent_threshold_bytes is indexed in the knowledge base and searched for it, as the
        capy_execute tool does: the errors it reports and the matching sections are printed,
        with the `capy search` command that finds more. Without an intent, output over
        index_threshold_bytes is indexed too and printed as its start, end and errors.
        --json carries the output itself (cut in the middle past max_returned_bytes) and,
        as indexed_answer, what would be printed instead.
    background
        Keep the program running past the timeout and return its partial output and pid.
        A background job lives as long as the capy process that started it, so this command
        waits for the job to end (Ctrl-C stops it).
    network
        `on` (the machine's network) or `off` (no network at all, loopback included: a fresh
        network namespace, refused where the platform has none). The executor pack sets the
        default.
    as_json
        Print the whole result as JSON.
    yes
        Run code that a permission rule marks "ask" (a "deny" rule always wins).
    show_secrets
        Print secrets in the output as found instead of redacted (stderr says so); for the
        rare value you need to see. The setting redaction.replies = false does this always.
        Long output is then printed itself (cut in the middle), not indexed: the knowledge
        base only ever stores it redacted.
    """
    from capy.cli.output import error_line, redacted
    from capy.executor import ExecutorError
    from capy.executor import execute as run_code

    if code == "-":
        code = _read_stdin()
        if code is None:
            error_line("could not read the code from standard input: it is not UTF-8 text")
            return 2
    if (problem := _timeout_problem(timeout)) is not None:
        error_line(problem)
        return 2
    try:
        refusal = _policy_refusal(language, code, allow_ask=yes)
        if refusal is not None:
            error_line(refusal)
            return 2
        result = run_code(
            language,
            code,
            timeout=timeout,
            background=background,
            network=network,
            prepare_output=None if show_secrets else redacted,
        )
    except ExecutorError as exc:
        error_line(str(exc))
        return 2
    with _secrets_shown_if(show_secrets):
        _print(result, code, intent, as_json, indexed=not show_secrets)
        if result.background:
            return _wait_for_job(result.pid)
    return result.exit_code if result.exit_code is not None else 1


def _secrets_shown_if(asked: bool):
    from contextlib import nullcontext

    from capy.cli.output import secrets_shown

    return secrets_shown("--show-secrets was given") if asked else nullcontext()


def _timeout_problem(timeout: float | None) -> str | None:
    """--timeout must lie in (0, the pack's ceiling], as the MCP tools' `timeout` must: a value
    outside was otherwise run with another timeout than the one asked for, silently."""
    if timeout is None:
        return None
    from capy.executor.sandbox import executor_view

    limits = executor_view().limits.timeout
    if 0 < timeout <= limits.max_seconds:
        return None
    return (
        f"--timeout must be more than 0 and at most {limits.max_seconds:g} seconds, not "
        f"{timeout:g}; leave it out for the default of {limits.default_seconds:g}"
    )


def _policy_refusal(language: str, code: str, *, allow_ask: bool) -> str | None:
    """The same permission rules the agent hooks apply; None when the code may run.

    The language and the code are checked first, so bad input gets the executor's own message.
    """
    from capy.cli.output import error_line
    from capy.executor import ExecutorError
    from capy.executor.runtimes import find_language
    from capy.executor.sandbox import executor_view
    from capy.security import check_command
    from capy.security.policy import Outcome

    canonical = find_language(executor_view(), language).language
    if not code.strip():
        raise ExecutorError("no code to run: the code is empty")
    decision = check_command(code, language=canonical, project_dir=Path.cwd())
    for warning in decision.warnings:
        error_line(warning)
    rule = f"{decision.rule} ({decision.source})" if decision.source else str(decision.rule)
    if decision.decision is Outcome.DENY:
        return f"refused by {rule}: {decision.reason or decision.part}"
    if decision.decision is Outcome.ASK and not allow_ask:
        return f"{rule} asks before running {decision.part!r}; rerun with --yes to run it"
    return None


def _read_stdin() -> str | None:
    try:
        return sys.stdin.buffer.read().decode("utf-8")
    except UnicodeDecodeError:
        return None


def _print(result, code: str, intent: str | None, as_json: bool, *, indexed: bool) -> None:
    from capy.cli.output import error_line, print_json, say

    # The knowledge base stores output redacted: a person who asked to see the secrets gets
    # the output itself.
    answer = _indexed_answer(result, code, intent) if indexed else None
    if as_json:
        data = {
            name: getattr(result, name)
            for name in result.__dataclass_fields__
            if name not in ("stdout", "stderr")
        }
        data["intent"] = intent
        data["indexed_answer"] = answer  # what a person (and the agent) is shown, or null
        print_json(data)
        return
    if answer is not None:
        from capy.cli.tables import print_markdown

        print_markdown(answer)
    elif result.output:
        say(result.output, end="" if result.output.endswith("\n") else "\n")
    sys.stdout.flush()
    for line in _status_lines(result, indexed=answer is not None):
        error_line(line)


def _indexed_answer(result, code: str, intent: str | None) -> str | None:
    """What `capy_execute` answers for long output (indexed, then searched for the intent or
    shown by head, tail and errors), or None when the output itself is printed. When the
    knowledge base cannot be opened the output is printed whole, and stderr says why."""
    from capy.api.execute import indexed_answer, run_label
    from capy.cli.output import error_line
    from capy.cli.replies import workspace_for
    from capy.config import ConfigError
    from capy.store import StoreError

    label = run_label("execute", result.language, code)
    try:
        return indexed_answer(workspace_for(None), result, intent=intent, label=label, code=code)
    except StoreError as error:
        error_line(f"the output was not indexed ({error.message}); it is printed whole")
    except ConfigError as error:
        error_line(f"the output was not indexed ({' '.join(error.lines)}); it is printed whole")
    return None


def _status_lines(result, *, indexed: bool) -> list[str]:
    lines = []
    if result.killed_reason == "timeout":
        lines.append(f"stopped after {result.duration_s:.1f} s: the timeout passed")
    elif result.killed_reason == "output-cap":
        lines.append("stopped: the program printed more than the output cap allows")
    elif result.killed_reason == "process-limit":
        lines.append("stopped: the program started more processes than the limit allows")
    elif result.killed_reason == "memory-limit":
        lines.append("stopped: the program used more memory than the limit allows")
    elif result.killed_reason == "cancelled":
        lines.append("stopped: the run was cancelled")
    if result.network == "off":
        lines.append("ran with the network off")
    if result.truncated_bytes and not indexed:  # indexed output was stored whole
        lines.append(f"output shortened: {result.truncated_bytes:,} bytes from the middle cut")
    if result.binary:
        lines.append("the output was not valid UTF-8 text; undecodable bytes show as U+FFFD")
    if result.background:
        lines.append(f"still running in the background as pid {result.pid}")
    return lines


def _wait_for_job(pid: int | None) -> int:
    from capy.cli.output import error_line
    from capy.executor import background

    found = background.job(pid) if pid is not None else None
    if found is None:
        return 0
    try:
        found.finished.wait()
    except KeyboardInterrupt:
        background.shutdown_background()
        error_line(f"background job {pid} stopped")
        return 130
    from capy.cli.output import say

    say(found.output_tail(), end="")
    return found.exit_code if found.exit_code is not None else 1
