"""Checks of the machine: Python and capy, language runtimes, SQLCipher with FTS5."""

from __future__ import annotations

import sys

from capy.doctor.context import DoctorContext
from capy.doctor.report import Check, Status

GROUP = "Environment"


def python_and_capy(ctx: DoctorContext) -> list[Check]:
    from capy import __version__

    version = ".".join(map(str, sys.version_info[:3]))
    detail = f"capy {__version__} on Python {version} ({sys.executable})"
    return [Check(GROUP, "Python and capy", Status.OK, detail)]


def runtimes(ctx: DoctorContext) -> list[Check]:
    from capy.executor.runtimes import detect_runtimes

    checks = []
    for status in detect_runtimes(ctx.view("executor")):
        name = f"runtime {status.language}"
        if status.executable:
            checks.append(Check(GROUP, name, Status.OK, f"{status.command} ({status.executable})"))
            continue
        wanted = _one_of(status.candidates)
        missing = wanted.removeprefix("one of ").replace(" or ", ", ")
        checks.append(
            Check(
                GROUP,
                name,
                Status.WARN,
                f"{missing} not on PATH; capy cannot run {status.language} code",
                f"install {wanted} if you need {status.language}, and put it on PATH",
            )
        )
    return checks


def isolation(ctx: DoctorContext) -> list[Check]:
    """Whether each sandboxed call is kept from the user's other processes, in plain words."""
    from capy.executor.isolation import in_sight, refusal, temp_mode, unavailable_reason
    from capy.executor.private import roots as private_roots

    rules = ctx.view("executor").isolation
    name = "sandbox isolation"
    if refused := refusal(rules):
        return [Check(GROUP, name, Status.FAIL, f"calls are refused: {refused}")]
    reason = unavailable_reason(rules)
    if reason is None:
        detail = (
            "each call runs in its own PID and mount namespaces: it cannot see, trace or "
            "signal capy or other calls, open their pipes or change cgroup limits, and cannot "
            "read capy's key files or stores directly (so `capy` run inside a call cannot open "
            "them either); "
        )
        own = private_roots(rules.private_tmp)
        gaps = list(in_sight(rules))
        if own:
            detail += _temp_folders(rules.private_tmp, temp_mode(rules))
        else:
            gaps.append(
                "calls share the machine's temp folders (isolation.private_tmp names none "
                "here): a call can rewrite a later call's script before it runs"
            )
        detail += (
            "it still runs as you and can change what you can change, including capy's own "
            "installation"
        )
        if gaps:
            return [Check(GROUP, name, Status.WARN, f"{detail}; but {'; '.join(gaps)}")]
        return [Check(GROUP, name, Status.OK, detail)]
    fix = (
        "run capy where the kernel allows PID and mount namespaces "
        "(root, or unprivileged user namespaces)"
    )
    detail = (
        "calls are NOT isolated from this user's other processes: code in one call can read "
        "capy's memory (its keys), its key files and encrypted stores, and other calls' "
        "output, change cgroup limits, and read or rewrite other calls' temp files and a "
        "later call's script in the shared temp folder before it runs, so that call runs "
        f"the other's code with its own network and rights ({reason})"
    )
    return [Check(GROUP, name, Status.WARN, detail, fix)]


def _temp_folders(private, mode: str | None) -> str:
    """What an isolated call's temp folders are here, in words."""
    from capy.executor.private import overlaid, roots

    own = ", ".join(roots(private))
    if mode == "overlay":
        return (
            f"its temp folders ({own}) are its own, gone when it ends: it reads the machine's "
            f"files in {', '.join(overlaid(private)[0])} (an overlay), but what it writes "
            "there stays its own and reaches neither the machine nor another call, and no "
            "other call can see or change its script; "
        )
    refused = (
        " (private_tmp.mode asks for an overlay showing the machine's files there, which "
        "this kernel refused)"
        if private.mode == "overlay"
        else ""
    )
    return (
        f"it has its own empty temp folders ({own}){refused}, gone when it ends, and no other "
        "call can see or change its script; "
    )


def _one_of(candidates: tuple[str, ...]) -> str:
    if len(candidates) == 1:
        return candidates[0]
    return "one of " + ", ".join(candidates[:-1]) + " or " + candidates[-1]


def sqlcipher_fts5(ctx: DoctorContext) -> list[Check]:
    """An in-memory encrypted database with both FTS5 tokenizers capy's store uses."""
    import secrets

    import sqlcipher3

    name = "SQLCipher and FTS5"
    conn = sqlcipher3.connect(":memory:")
    try:
        conn.execute(f"PRAGMA key = \"x'{secrets.token_hex(32)}'\"")
        cipher = (conn.execute("PRAGMA cipher_version").fetchone() or [None])[0]
        if not cipher:
            return [
                Check(
                    GROUP,
                    name,
                    Status.FAIL,
                    "the sqlcipher3 module runs plain SQLite: nothing would be encrypted",
                    "reinstall capy so that sqlcipher3 is built against SQLCipher",
                )
            ]
        conn.execute("CREATE VIRTUAL TABLE words USING fts5(body, tokenize='porter unicode61')")
        conn.execute("CREATE VIRTUAL TABLE grams USING fts5(body, tokenize='trigram')")
        for table in ("words", "grams"):
            conn.execute(f"INSERT INTO {table} (body) VALUES ('running the indexer')")
        porter = conn.execute("SELECT count(*) FROM words WHERE words MATCH 'run'").fetchone()[0]
        trigram = conn.execute("SELECT count(*) FROM grams WHERE grams MATCH 'dexe'").fetchone()[0]
        sqlite = conn.execute("SELECT sqlite_version()").fetchone()[0]
    except sqlcipher3.DatabaseError as error:
        return [
            Check(
                GROUP,
                name,
                Status.FAIL,
                f"SQLCipher could not create FTS5 tables ({error})",
                "reinstall capy with an sqlcipher3 build that includes FTS5",
            )
        ]
    finally:
        conn.close()
    if not (porter and trigram):
        return [
            Check(
                GROUP,
                name,
                Status.FAIL,
                "FTS5 tables were created but a search found nothing (porter or trigram broken)",
                "reinstall capy with an sqlcipher3 build that includes FTS5",
            )
        ]
    detail = f"SQLCipher {cipher} (SQLite {sqlite}); FTS5 porter and trigram search work"
    return [Check(GROUP, name, Status.OK, detail)]
