"""`capy vault reindex | delete | checkpoint | compact | merge | rekey | resume`: thin shells
over `capy.vault`, registered lazily on the `vault` sub-app."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from cyclopts import Parameter

from capy.cli.output import print_json, progress_bar, say
from capy.cli.store import JsonFlag, guarded, read_small_text
from capy.cli.vault import CANNOT_RUN, SOME_FAILED, PathOption, _vault
from capy.units import human_bytes

if TYPE_CHECKING:
    from capy.store.keys import DatabaseKey
    from capy.vault.resume import ResumePlan

YesFlag = Annotated[bool, Parameter(name="--yes", negative=(), help="Do not ask first.")]


def reindex(
    *,
    all_: Annotated[bool, Parameter(name="--all", negative=())] = False,
    as_json: JsonFlag = False,
    path: PathOption = None,
) -> int:
    """Rebuild the search rows of sessions indexed with older rules, from the archived files.

    The archived files are only read. Interrupted, it keeps what it finished; run it again to
    complete it.

    Parameters
    ----------
    all_
        Rebuild every session's rows, not only the stale ones.
    as_json
        Print the report as JSON.
    path
        Vault file to use instead of the default (also CAPY_VAULT_PATH).
    """

    def run() -> int:
        from dataclasses import asdict

        from capy.vault.reindex import reindex_vault

        with _vault(path) as vault, progress_bar("reindexing", quiet=as_json) as progress:
            report = reindex_vault(vault, everything=all_, progress=progress)
        if as_json:
            print_json(asdict(report))
        else:
            say(
                f"reindexed {report.sessions} sessions ({human_bytes(report.bytes)}): "
                f"{report.messages:,} messages"
            )
            for failure in report.failed:
                say(f"  failed: {failure['session']}: {failure['reason']}")
        return SOME_FAILED if report.failed else 0

    return guarded(run)


def delete(session: str, *, yes: YesFlag = False, path: PathOption = None) -> int:
    """Delete an archived session: its files (unless another session shares them) and rows.

    Parameters
    ----------
    session
        The session id (a unique prefix will do), or <platform>:<id>.
    yes
        Delete without asking (needed when not at a terminal).
    path
        Vault file to use instead of the default (also CAPY_VAULT_PATH).
    """

    def run() -> int:
        import sys

        from capy.cli.output import error_line
        from capy.vault.restore import find_session
        from capy.vault.upkeep import delete_session

        with _vault(path) as vault:
            label = find_session(vault, session)[1]
            if not yes:
                if not sys.stdin.isatty():
                    error_line(f"deleting {label} cannot be undone; pass --yes to confirm")
                    return CANNOT_RUN
                answer = input(f"delete {label} from the vault for good? [y/N] ")
                if answer.strip().lower() not in ("y", "yes"):
                    say("nothing deleted")
                    return 0
            deleted = delete_session(vault, label)
        say(f"deleted {deleted.label}: {deleted.files} files, {deleted.blobs_dropped} unshared")
        return 0

    return guarded(run)


def checkpoint(*, path: PathOption = None) -> int:
    """Copy the vault's write-ahead log into its file and truncate the log.

    Parameters
    ----------
    path
        Vault file to use instead of the default (also CAPY_VAULT_PATH).
    """

    def run() -> int:
        from capy.store.maintenance import checkpoint as checkpoint_wal

        with _vault(path) as vault:
            result = checkpoint_wal(vault.conn)
        state = "truncated" if result.truncated else "not truncated: another process reads it"
        say(f"checkpointed {result.checkpointed} of {result.wal_frames} WAL frames; {state}")
        return 0

    return guarded(run)


def compact(*, as_json: JsonFlag = False, path: PathOption = None) -> int:
    """Recompress archived files at zstd's best level where smaller, then VACUUM the vault.

    Parameters
    ----------
    as_json
        Print the figures as JSON.
    path
        Vault file to use instead of the default (also CAPY_VAULT_PATH).
    """

    def run() -> int:
        from dataclasses import asdict

        from capy.vault.upkeep import compact_vault

        with _vault(path) as vault, progress_bar("compacting", quiet=as_json) as progress:
            report = compact_vault(vault, progress=progress)
        if as_json:
            print_json(asdict(report))
            return 0
        say(
            f"recompressed {report.recompressed} of {report.blobs} files: "
            f"{human_bytes(report.stored_before)} -> {human_bytes(report.stored_after)}"
        )
        say(f"vault file: {human_bytes(report.file_before)} -> {human_bytes(report.file_after)}")
        return 0

    return guarded(run)


def merge(
    *,
    from_: Annotated[Path, Parameter(name="--from")],
    from_key_file: Annotated[Path | None, Parameter(name="--from-key-file")] = None,
    as_json: JsonFlag = False,
    path: PathOption = None,
) -> int:
    """Add the sessions of another vault (another machine's) to this one; the other is only read.

    Sessions archived here with the same files are left alone; a larger copy replaces a smaller
    one. Merging twice changes nothing.

    Parameters
    ----------
    from_
        The other vault file.
    from_key_file
        File holding the other vault's key (its vault.key); CAPY_FROM_VAULT_KEY works too.
        Without either, this vault's own key is tried.
    as_json
        Print the counts as JSON.
    path
        Vault file to merge into instead of the default (also CAPY_VAULT_PATH).
    """

    def run() -> int:
        from capy.vault.merge import merge_vault

        with _vault(path) as vault:
            key = _other_key(from_key_file) or vault.key
            with progress_bar("merging", quiet=as_json) as progress:
                report = merge_vault(vault, from_.expanduser(), key, progress=progress)
        if as_json:
            print_json(report.as_dict())
            return 0
        counts = ", ".join(f"{count} {name}" for name, count in sorted(report.outcomes.items()))
        say(f"merged {from_}: {counts or 'no sessions'}; {report.messages:,} messages indexed")
        return 0

    return guarded(run)


def _other_key(key_file: Path | None) -> DatabaseKey | None:
    """The other vault's key from --from-key-file or CAPY_FROM_VAULT_KEY, else None."""
    from capy.store.keys import DatabaseKey, KeySource, key_from_text, read_key_file

    if key_file is not None:
        source = KeySource(name="vault", label=f"key file {key_file}", key_file=key_file)
        try:
            return DatabaseKey(read_key_file(key_file), source)
        except FileNotFoundError:
            from capy.store.errors import KeyFileError

            raise KeyFileError(f"there is no key file at {key_file}; check the path") from None
    text = os.environ.get("CAPY_FROM_VAULT_KEY", "")
    if text.strip():
        source = KeySource(name="vault", label="CAPY_FROM_VAULT_KEY")
        return DatabaseKey(key_from_text(text, "vault"), source)
    return None


def rekey(
    *,
    new_key_file: Annotated[Path | None, Parameter(name="--new-key-file")] = None,
    rotate: Annotated[bool, Parameter(name="--rotate", negative=())] = False,
    path: PathOption = None,
) -> int:
    """Re-encrypt the vault under a new key, keeping the old file as a backup.

    A copy under the new key is written, verified (integrity and row counts) and swapped in;
    the previous file and key stay beside it. Stop agents and capy servers first.

    Parameters
    ----------
    new_key_file
        Rotate to the key in this file (64 hex digits, or a passphrase); CAPY_NEW_VAULT_KEY
        works too.
    rotate
        Rotate the key kept in capy's vault key file to a fresh random key.
    path
        Vault file to use instead of the default (also CAPY_VAULT_PATH).
    """

    def run() -> int:
        from capy.cli.store import _print_outcome
        from capy.store.maintenance import new_key_env_var
        from capy.vault.upkeep import rekey_vault

        variable = new_key_env_var("vault")
        if new_key_file is not None:
            text, label = _read_new_key(new_key_file), f"key file {new_key_file}"
        elif os.environ.get(variable, "").strip():
            text, label = os.environ[variable], variable
        else:
            text, label = None, ""
        _print_outcome(rekey_vault(path, text, label, generate=rotate))
        return 0

    return guarded(run)


def _read_new_key(path: Path) -> str:
    from capy.store import KeyFileError

    try:
        return read_small_text(path)
    except (OSError, UnicodeDecodeError) as error:
        raise KeyFileError(f"cannot read the new key file {path} ({error})") from None


def resume(
    session: str,
    *,
    run_: Annotated[bool, Parameter(name="--run", negative=())] = False,
    output: Annotated[Path | None, Parameter(name="--output")] = None,
    path: PathOption = None,
) -> int:
    """Restore a session where its agent looks for it and print (or run) the resume command.

    Parameters
    ----------
    session
        The session id (a unique prefix will do), or <platform>:<id>.
    run_
        Run the command (in the session's working directory when it exists) instead of
        printing it.
    output
        Folder to restore into instead of where the session was imported from.
    path
        Vault file to use instead of the default (also CAPY_VAULT_PATH).
    """

    def run() -> int:
        from capy.rules import load_rules
        from capy.vault.resume import prepare_resume

        with _vault(path) as vault:
            plan = prepare_resume(vault, session, load_rules(), output)
        return finish_resume(plan, run_)

    return guarded(run)


def finish_resume(plan: ResumePlan, run_: bool) -> int:
    """Say what the restore wrote, then print the resume command, or run it (also what the
    browser's resume does once it has closed)."""
    for item in plan.restored:
        verb = "restored" if item.written else "already there"
        say(f"{verb}: {item.path}")
    if not run_:
        where = f"cd {_quoted(plan.cwd)} && " if plan.cwd else ""
        say(f"{where}{plan.command}")
        return 0
    return _run_command(plan.command, plan.cwd)


def _quoted(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))


def _run_command(command: str, cwd: Path | None) -> int:
    import shlex
    import subprocess

    from capy.cli.output import error_line

    argv = shlex.split(command)
    try:
        return subprocess.call(argv, cwd=cwd)
    except FileNotFoundError:
        error_line(
            f"cannot run {argv[0]!r}: it is not on PATH; install the agent or run it yourself"
        )
        return CANNOT_RUN
