"""`capy_execute`, `capy_execute_file`, `capy_batch_execute`: sandboxed runs, judged first.

Every run passes the same permission rules the hooks apply (Claude Code's settings plus the
security pack). An "ask" rule cannot be answered from inside a tool call, so it refuses and says
how to run the command where the user is asked. Long output is indexed instead of returned:
searched for the intent when one is given, else shown by its head, tail and errors
(`capy.api.intent`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from capy.api.reply import ToolInputError, ToolReply

if TYPE_CHECKING:
    from capy.api.workspace import Workspace
    from capy.executor import ExecutionResult
    from capy.security import Decision


@dataclass(frozen=True)
class BatchCommand:
    label: str
    command: str


def execute_code(
    workspace: Workspace,
    *,
    language: str,
    code: str,
    timeout: float | None = None,
    background: bool = False,
    intent: str | None = None,
    network: str | None = None,
) -> ToolReply:
    """Run `code`; with an `intent` and long output, answer from the indexed output instead."""
    from capy.api.outbound import text_redactor
    from capy.executor import execute

    canonical = _checked_language(workspace, language, code)
    refusal = policy_refusal(workspace, code, language=canonical)
    if refusal is not None:
        return ToolReply(refusal, is_error=True)
    result = execute(
        canonical,
        code,
        timeout=timeout,
        background=background,
        cwd=workspace.project_dir,
        rules=workspace.rules,
        network=network,
        prepare_output=text_redactor(workspace),
    )
    label = run_label("execute", canonical, code)
    reply = _reply(workspace, result, intent=intent, label=label, code=code)
    return with_run_facts(reply, result, label)


def execute_file(
    workspace: Workspace,
    *,
    path: str,
    language: str,
    code: str,
    timeout: float | None = None,
    intent: str | None = None,
    network: str | None = None,
) -> ToolReply:
    """Run `code` with the file's content injected; read-deny rules on the path apply first."""
    from capy.api.outbound import text_redactor
    from capy.executor import execute_file as run_file

    canonical = _checked_language(workspace, language, code)
    target = resolve_path(workspace, path)
    refusal = path_refusal(workspace, "Read", target) or policy_refusal(
        workspace, code, language=canonical
    )
    if refusal is not None:
        return ToolReply(refusal, is_error=True)
    result = run_file(
        target,
        canonical,
        code,
        timeout=timeout,
        cwd=workspace.project_dir,
        rules=workspace.rules,
        network=network,
        prepare_output=text_redactor(workspace),
    )
    label = run_label("file", canonical, f"{target}\0{code}")
    reply = _reply(workspace, result, intent=intent, label=label, code=f"{target}\n{code}")
    return with_run_facts(reply, result, label)


def execute_batch(
    workspace: Workspace,
    commands: Sequence[BatchCommand],
    *,
    queries: Sequence[str],
    timeout: float | None = None,
    concurrency: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    network: str | None = None,
) -> ToolReply:
    """Run shell commands, index every output as one source, answer every query from it."""
    from capy.api.intent import batch_reply
    from capy.executor import execute_batch as run_batch

    if not commands:
        raise ToolInputError("give at least one command to run")
    for command in commands:
        refusal = policy_refusal(workspace, command.command, language="shell")
        if refusal is not None:
            return ToolReply(f"{command.label}: {refusal}", is_error=True)
    results = run_batch(
        [(command.label, command.command) for command in commands],
        timeout=timeout,
        concurrency=concurrency,
        cwd=workspace.project_dir,
        rules=workspace.rules,
        progress=progress,
        network=network,
    )
    sections = [(result.label or "", _full_output(result)) for result in results]
    processed = sum(len(text.encode("utf-8")) for _, text in sections)
    label = run_label("batch", "shell", "\0".join(command.command for command in commands))
    statuses = "\n".join(f"- {result.label}: {_status(result, indexed=True)}" for result in results)
    body = batch_reply(workspace, sections, queries=list(queries), label=label)
    return ToolReply(f"{statuses}\n\n{body}", processed_bytes=processed)


def policy_refusal(workspace: Workspace, code: str, *, language: str) -> str | None:
    """Why the permission rules refuse `code`, or None when it may run."""
    from capy.security import check_command

    decision = check_command(
        code, language=language, project_dir=workspace.project_dir, ruleset=workspace.rules
    )
    return _refusal(decision, what=repr(decision.part) if decision.part else "this code")


def path_refusal(workspace: Workspace, tool: str, path: Path) -> str | None:
    from capy.security import check_tool

    decision = check_tool(
        tool, path=str(path), project_dir=workspace.project_dir, ruleset=workspace.rules
    )
    return _refusal(decision, what=str(path))


def _refusal(decision: Decision, *, what: str) -> str | None:
    from capy.security.policy import Outcome

    rule = f"{decision.rule} ({decision.source})" if decision.source else str(decision.rule)
    if decision.decision is Outcome.DENY:
        reason = f": {decision.reason}" if decision.reason else ""
        return f"Refused by the permission rule {rule}{reason}. It matched {what}."
    if decision.decision is Outcome.ASK:
        return (
            f"The permission rule {rule} asks the user before running {what}, and a capy tool "
            "cannot ask. Run it through your own shell tool, where the user is asked, or have "
            "the user allow it in their settings."
        )
    return None


def resolve_path(workspace: Workspace, path: str) -> Path:
    if not path or not path.strip():
        raise ToolInputError("give the path of the file to process")
    return (workspace.project_dir / Path(path).expanduser()).resolve()


def _checked_language(workspace: Workspace, language: str, code: str) -> str:
    from capy.executor import ExecutorError
    from capy.executor.runtimes import find_language
    from capy.executor.sandbox import executor_view

    try:
        canonical = find_language(executor_view(workspace.rules), language).language
    except ExecutorError as error:
        raise ToolInputError(str(error)) from None
    if not code.strip():
        raise ToolInputError("no code to run: the code is empty")
    return canonical


def _reply(
    workspace: Workspace, result: ExecutionResult, *, intent: str | None, label: str, code: str
) -> ToolReply:
    full = _full_output(result)
    processed = len(full.encode("utf-8"))
    body = indexed_answer(workspace, result, intent=intent, label=label, code=code)
    # A program that failed is still a result the agent asked for; only a call capy could not
    # make is a tool error.
    status = _status(result, indexed=body is not None)
    return ToolReply(f"{status}\n\n{body or fenced(result.output)}", processed_bytes=processed)


def indexed_answer(
    workspace: Workspace,
    result: ExecutionResult,
    *,
    intent: str | None,
    label: str,
    code: str = "",
) -> str | None:
    """The reply for output too long to hand back whole, or None when the output itself is
    the answer. With an intent, output over the executor pack's `intent_threshold_bytes` is
    indexed and searched for it, and shorter output is handed back whole unless the intent is
    judged unanswerable from it (then one short line says so); without one, output over
    `index_threshold_bytes` is indexed and its head, tail and errors shown. A background job's
    output is still growing: never. `code` is what ran: a program need not print its own name
    (`npm outdated`), so the intent's words it holds are not called absent from the output."""
    from capy.api.intent import brief_verdict, intent_reply, long_output_reply

    if result.background:
        return None
    full = _full_output(result)
    size = len(full.encode("utf-8"))
    limits = workspace.rules.view("executor").limits.output
    if intent and intent.strip():
        if size > limits.intent_threshold_bytes:
            return intent_reply(workspace, full, intent=intent, label=label, command=code)
        verdict = brief_verdict(workspace, full, intent=intent, label=label, command=code)
        if verdict is not None:
            return verdict
    if size > limits.index_threshold_bytes:
        return long_output_reply(workspace, full, label=label)
    return None


def with_run_facts(reply: ToolReply, result: ExecutionResult, label: str) -> ToolReply:
    """`reply` with the run's outcome as structured content, for clients that script runs.

    `source` is the label the output was indexed under, or None when it came back whole. The
    reply names that label exactly when it indexed the output (the agent needs it to search
    further; it holds a hash of the code, so output cannot print it by chance), so the text
    decides, whichever branch of `_reply` wrote it.
    """
    from dataclasses import replace

    outcome = result.killed_reason or ("running" if result.exit_code is None else "exited")
    source = label if label in reply.text else None
    facts = {
        "language": result.language,
        "exit_code": result.exit_code,
        "outcome": outcome,
        "soft_failure": result.soft_failure,
        "status": _status(result, indexed=source is not None).replace("**", ""),
        "network": result.network,
        "duration_s": round(result.duration_s, 3),
        "truncated_bytes": result.truncated_bytes,
        "pid": result.pid if result.background else None,
        "source": source,
    }
    return replace(reply, data=facts)


def _full_output(result: ExecutionResult) -> str:
    """Everything the program printed, up to the hard cap: what gets indexed.

    `output` keeps arrival order but is cut in the middle when long; then the full streams are
    used, stdout first.
    """
    if not result.truncated_bytes:
        return result.output
    if result.stderr:
        return f"{result.stdout}\n{result.stderr}" if result.stdout else result.stderr
    return result.stdout


def _status(result: ExecutionResult, *, indexed: bool = False) -> str:
    parts = [f"exit {result.exit_code}" if result.exit_code is not None else "running"]
    if result.soft_failure:
        parts.append("soft failure: printed a result with exit 1")
    reasons = {
        "timeout": "stopped: the timeout passed",
        "output-cap": "stopped: the output cap was reached",
        "process-limit": "stopped: too many processes",
        "memory-limit": "stopped: the memory cap was reached",
        "cancelled": "stopped: cancelled",
    }
    if result.killed_reason:
        parts.append(reasons.get(result.killed_reason, f"stopped: {result.killed_reason}"))
    if result.background:
        parts.append(f"still running in the background as pid {result.pid}")
    if result.truncated_bytes and not indexed:  # indexed output was stored whole
        parts.append(f"{result.truncated_bytes:,} bytes cut from the middle")
    if result.binary:
        parts.append("binary output: undecodable bytes shown as U+FFFD")
    parts.append(f"network {result.network}")
    parts.append(f"{result.duration_s:.2f} s")
    return "**" + result.language + "**: " + "; ".join(parts)


def fenced(text: str) -> str:
    """`text` in a code fence longer than any run of backticks inside it, so that output
    containing a fence cannot end ours early; verbatim otherwise."""
    if not text:
        return "(no output)"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}{'' if text.endswith(chr(10)) else chr(10)}{fence}"


def run_label(tool: str, language: str, text: str) -> str:
    """The source label a run's output is indexed under: the same code, the same label, so a
    rerun replaces its earlier output."""
    digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:10]
    return f"{tool}:{language}:{digest}"
