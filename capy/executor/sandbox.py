"""`execute` and `execute_file`: run one snippet in its own temp dir, session and environment."""

from __future__ import annotations

import os
import secrets
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from capy.executor import background as background_jobs
from capy.executor import private
from capy.executor.cancel import current_cancel
from capy.executor.environment import sandbox_environment
from capy.executor.errors import ExecutorError
from capy.executor.isolation import calls_root, check_cwd
from capy.executor.isolation import plan as isolation_plan
from capy.executor.janitor import remove_later
from capy.executor.network import isolate, resolve_mode
from capy.executor.output import decode, returned_text
from capy.executor.phase import Phase, PhaseOutcome, cleanup, finish, spawn, stop_and_collect
from capy.executor.pump import Stop
from capy.executor.result import ExecutionResult
from capy.executor.runtimes import ResolvedRuntime, find_language, resolve_runtime
from capy.rules.views.executor import ExecutorPack, NetworkMode, WorkingDir, fill_argv


def executor_view(rules=None, project_dir: Path | None = None) -> ExecutorPack:
    """Accept a RuleSet, the executor view itself, or nothing (load the packs in force)."""
    if isinstance(rules, ExecutorPack):
        return rules
    if rules is None:
        from capy.rules import load_rules

        rules = load_rules(project_dir)
    return rules.view("executor")


@dataclass
class _Call:
    view: ExecutorPack
    runtime: ResolvedRuntime
    project_dir: Path
    temp_dir: Path
    layout: private.Layout  # the call's folder (and what else it needs) as the call sees it
    source: bytes
    marker: str
    env: dict[str, str]
    started: float
    deadline: float
    cancel: threading.Event | None
    network: NetworkMode = NetworkMode.ON
    prepare_output: Callable[[str], str] | None = None


def execute(
    language: str,
    code: str,
    *,
    timeout: float | None = None,
    background: bool = False,
    cwd: str | os.PathLike[str] | None = None,
    rules=None,
    cancel: threading.Event | None = None,
    network: str | None = None,
    prepare_output: Callable[[str], str] | None = None,
) -> ExecutionResult:
    """Run `code` in `language`; `cwd` is the project directory (where shell commands run).

    Setting `cancel` (by default the current one, see `capy.executor.cancel`) kills the call's
    whole process tree; the result then has `killed_reason` "cancelled". `network` is "on" or
    "off" (see `capy.executor.network`); None takes the executor pack's default.
    `prepare_output` rewrites the whole output before a long one is cut (see `returned_text`).
    """
    return _execute(
        language, code, timeout, background, cwd, rules, None, cancel, network, prepare_output
    )


def execute_file(
    path: str | os.PathLike[str],
    language: str,
    code: str,
    *,
    timeout: float | None = None,
    background: bool = False,
    cwd: str | os.PathLike[str] | None = None,
    rules=None,
    cancel: threading.Event | None = None,
    network: str | None = None,
    prepare_output: Callable[[str], str] | None = None,
) -> ExecutionResult:
    """Run `code` with FILE_CONTENT and FILE_CONTENT_PATH set from `path` for the language.

    Only what the code prints comes back; the file's content never enters the result.
    """
    base = Path(cwd) if cwd is not None else Path.cwd()
    target = (base / Path(path)).resolve()
    from capy.userfiles import UserFileError, check_user_file

    try:
        check_user_file(target, purpose="read")  # a FIFO or /dev/zero would stall the child
    except UserFileError as error:
        raise ExecutorError(error.message) from None
    return _execute(
        language,
        code,
        timeout,
        background,
        cwd,
        rules,
        str(target),
        cancel,
        network,
        prepare_output,
    )


def _execute(
    language, code, timeout, background, cwd, rules, file_path, cancel, network, prepare_output
):
    project_dir = Path(cwd) if cwd is not None else Path.cwd()
    if not project_dir.is_dir():
        raise ExecutorError(f"working directory {str(project_dir)!r} does not exist")
    view = executor_view(rules, project_dir)
    lang = find_language(view, language)
    if not isinstance(code, str) or not code.strip():
        raise ExecutorError("no code to run: the code is empty")
    runtime = resolve_runtime(lang)
    mode = resolve_mode(network, view.network.default)
    isolate([], mode)  # refuse a mode this machine cannot give before anything starts
    # and a call the pack requires isolated where it cannot be
    found = isolation_plan(view.isolation, offline=mode is NetworkMode.OFF)
    isolated = found is not None
    if isolated:
        check_cwd(view.isolation, project_dir)
    if background:
        background_jobs.check_capacity(view.limits.background)
    source = _encode(lang.source(code, with_file_content=file_path is not None))
    call = _prepare(view, runtime, project_dir, source, timeout, file_path, found)
    call.cancel = cancel if cancel is not None else current_cancel()
    call.network = mode
    call.prepare_output = prepare_output
    handed_over = False
    try:
        result, handed_over = _run(call, background)
        return result
    finally:
        if not handed_over:
            remove_later(call.temp_dir)


def _encode(source: str) -> bytes:
    try:
        return source.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ExecutorError(
            f"the code holds a character UTF-8 cannot encode at position {exc.start}"
        ) from None


def _prepare(view, runtime, project_dir, source, timeout, file_path, found) -> _Call:
    """The call's folder, made 0700 with O_EXCL (mkdtemp); where calls are isolated with
    their own temp folders, in capy's hidden data folder (see `isolation.calls_root`), or,
    where none is hidden and the folders start empty, under the first of them."""
    own = view.isolation.private_tmp if found is not None else None
    root = _calls_root(view, found)
    prefix = private.HOST_PREFIX if root is None else private.call_prefix()
    temp_dir = Path(tempfile.mkdtemp(prefix=prefix, dir=root))
    try:
        script = os.open(
            temp_dir / runtime.plan.file_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600
        )
        with open(script, "wb") as handle:
            handle.write(source)
        home = Path(os.path.expanduser("~"))
        layout = private.layout(own, temp_dir, project=project_dir, home=home, file_path=file_path)
    except BaseException:
        remove_later(temp_dir)
        raise
    marker = secrets.token_hex(12)
    env = sandbox_environment(view, marker, file_path=layout.file_inside)
    private.temp_variables(env, own)
    started = time.monotonic()
    deadline = started + view.limits.timeout.clamp(timeout)
    return _Call(
        view, runtime, project_dir, temp_dir, layout, source, marker, env, started, deadline, None
    )


def _calls_root(view, found) -> str | None:
    """Where the call's folder is made (None: the machine's temp folder)."""
    if found is None or not found.private:
        return None
    if root := calls_root(view.isolation):
        return root
    if found.temp_mode == "overlay":  # the machine's /tmp is in every call's sight
        raise ExecutorError(
            "capy could not make its folder for calls' scripts in its data folder, which "
            "calls never see; check that the data folder is yours and writable."
        )
    return private.host_root(view.isolation.private_tmp)


def _argv(call: _Call, template: tuple[str, ...]) -> list[str]:
    inside = call.layout.inside
    binary = f"{inside}/" + ("script.exe" if sys.platform == "win32" else "script")
    return fill_argv(
        template,
        runtime=call.runtime.executable,
        file=f"{inside}/{call.runtime.plan.file_name}",
        dir=inside,
        binary=binary,
    )


def _spawn(call: _Call, template: tuple[str, ...]) -> Phase:
    language = call.runtime.language
    layout = call.layout
    workdir = call.project_dir if language.cwd is WorkingDir.PROJECT else layout.inside
    # A ready spawner's call folder holds only what its line writes: one step (no compiled
    # program to keep for a second), and no file of the machine bound into it.
    files = None
    if call.runtime.plan.compile is None and all(bind.folder for bind in layout.binds):
        files = ((f"{layout.inside}/{call.runtime.plan.file_name}", call.source),)
    try:
        return spawn(
            _argv(call, template),
            env=call.env,
            cwd=str(workdir),
            marker=call.marker,
            limits=call.view.limits,
            isolation=call.view.isolation,
            offline=call.network is NetworkMode.OFF,
            cancel=call.cancel,
            binds=layout.binds,
            files=files if layout.private else (),
        )
    except OSError as exc:
        raise ExecutorError(
            f"could not start {call.runtime.executable} for {language.language}: "
            f"{exc.strerror or exc}"
        ) from None


def _run(call: _Call, background: bool) -> tuple[ExecutionResult, bool]:
    plan = call.runtime.plan
    if plan.compile is not None:
        compiled = _spawn(call, plan.compile)
        outcome = finish(compiled, call.deadline)
        if outcome.exit_code != 0 or outcome.killed_reason:
            return _result(call, compiled, outcome), False
    phase = _spawn(call, plan.run)
    try:
        stop = phase.pump.run_until(call.deadline)
    except BaseException:  # Ctrl-C, a shutdown: the call's processes must not outlive it
        cleanup(phase)
        raise
    if stop is Stop.DEADLINE and background:
        partial = _result(call, phase, None)
        background_jobs.adopt(phase, call.temp_dir, call.runtime.language.language, call.view)
        return partial, True
    return _result(call, phase, stop_and_collect(phase, stop)), False


def _result(call: _Call, phase: Phase, outcome: PhaseOutcome | None) -> ExecutionResult:
    """`outcome` None: the process keeps running in the background, so no exit code yet."""
    pump = phase.pump
    combined = bytes(pump.combined)
    text, cut = returned_text(combined, call.view.limits.output, prepare=call.prepare_output)
    stdout, stderr = decode(bytes(pump.stdout)), decode(bytes(pump.stderr))
    language = call.runtime.language
    exit_code = outcome.exit_code if outcome else None
    killed = outcome.killed_reason if outcome else None
    soft = killed is None and language.is_soft_failure(exit_code, stdout.text)
    return ExecutionResult(
        language=language.language,
        exit_code=exit_code,
        stdout=stdout.text,
        stderr=stderr.text,
        output=text,
        truncated_bytes=cut,
        timed_out=killed == "timeout",
        killed_reason=killed,
        pid=phase.pid if outcome is None else None,
        duration_s=round(time.monotonic() - call.started, 4),
        soft_failure=soft,
        invalid_utf8=stdout.invalid_utf8 or stderr.invalid_utf8,
        binary=stdout.binary or stderr.binary,
        background=outcome is None,
        sandbox_id=call.marker,
        runtime=call.runtime.executable,
        network=call.network.value,
    )
