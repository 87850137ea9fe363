"""`capy capsules add | list | show`: write one capsule by hand, and browse the log."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any

from cyclopts import Parameter

from capy.cli.capsules import PathOption, drain_before_reading
from capy.cli.guard import guarded
from capy.cli.output import say
from capy.cli.store import JsonFlag

if TYPE_CHECKING:
    from capy.capsules import Capsule
    from capy.rules.views.capsules import CapsulesPack

CLI_SOURCE = "cli"
PREVIEW_CHARS = 72
_AGO = re.compile(r"(\d+)\s*([smhdw])")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def add(
    kind: str,
    /,
    *text: str,
    tag: Annotated[tuple[str, ...], Parameter(name="--tag", negative=())] = (),
    meta: Annotated[tuple[str, ...], Parameter(name="--meta", negative=())] = (),
    path: PathOption = None,
) -> int:
    """Write one capsule (source cli) into this project's scope; prints its id.

    Parameters
    ----------
    kind
        prompt, response, tool_call, diff, error, note or decision.
    text
        The content (words are joined with spaces).
    tag
        A label to keep with it (repeat for more).
    meta
        A metadata key=value (repeat for more; a list key such as files takes each value).
    path
        Capsule log to use instead of the default (also CAPY_CAPSULES_PATH).
    """

    def run() -> int:
        from capy.capsules import CapsuleDraft, open_capsules
        from capy.cli.output import error_line

        content = " ".join(text)
        if not content.strip():
            error_line("give the capsule's text: capy capsules add note WORDS...")
            return 2
        with open_capsules(path) as capsules:
            metadata = _metadata(meta, tag, capsules.rules.view("capsules"))
            [written] = capsules.write([CapsuleDraft(kind, content, CLI_SOURCE, metadata)])
        state = "written" if written.new else "already there"
        say(f"{written.id} ({kind}, {state})")
        return 0

    return guarded(run)


def _metadata(pairs: tuple[str, ...], tags: tuple[str, ...], pack: CapsulesPack) -> dict:
    """`--meta key=value` pairs typed by the pack's known keys; `--tag`s join `tags`."""
    from capy.capsules import CapsuleError

    metadata: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise CapsuleError(f"--meta {pair!r} is not key=value: write e.g. --meta branch=main")
        key = key.strip()
        known = pack.metadata.get(key)
        kind = known.type if known is not None else "string"
        if kind == "array":
            metadata.setdefault(key, []).append(value)
        elif kind in ("integer", "number"):
            try:
                metadata[key] = int(value) if kind == "integer" else float(value)
            except ValueError:
                raise CapsuleError(f"--meta {key} takes a number, not {value!r}") from None
        elif kind == "boolean":
            metadata[key] = value.strip().lower() in ("1", "true", "yes")
        else:
            metadata[key] = value
    if tags:
        metadata["tags"] = [*metadata.get("tags", []), *tags]
    return metadata


def list_capsules(
    *,
    kind: str | None = None,
    session: str | None = None,
    since: str | None = None,
    limit: int | None = None,
    as_json: JsonFlag = False,
    path: PathOption = None,
) -> int:
    """The newest capsules, every scope, filtered.

    Parameters
    ----------
    kind
        Only capsules of this kind.
    session
        Only capsules of this agent session id.
    since
        Only capsules created since a time (2026-05-01, 2026-05-01T12:00Z) or an age (30m, 12h, 7d).
    limit
        How many to show (default: the capsules pack's archive.list_limit).
    as_json
        Print the capsules as JSON.
    path
        Capsule log to use instead of the default (also CAPY_CAPSULES_PATH).
    """

    def run() -> int:
        from capy.capsules import CapsuleError, open_capsules
        from capy.capsules.sqlite.listing import CapsuleFilter
        from capy.cli.output import print_json

        with open_capsules(path) as capsules:
            drain_before_reading(capsules, path)
            pack = capsules.rules.view("capsules")
            if limit is not None and limit < 1:
                raise CapsuleError("--limit must be at least 1")
            wanted = CapsuleFilter(kind, session, _since(since), limit or pack.archive.list_limit)
            found = [capsule for _, capsule in capsules.backend.newest(wanted)]
        if as_json:
            print_json([capsule.record() for capsule in found])
        elif not found:
            say("no capsules match")
        else:
            _print_list(found)
        return 0

    return guarded(run)


def _since(text: str | None) -> float | None:
    import time

    from capy.capsules.model import CapsuleError, canonical_time, unix_seconds

    if text is None:
        return None
    if ago := _AGO.fullmatch(text.strip().lower()):
        return time.time() - int(ago.group(1)) * _SECONDS[ago.group(2)]
    try:
        return unix_seconds(canonical_time(text))
    except CapsuleError:
        raise CapsuleError(
            f"--since {text!r} is neither a time (2026-05-01, 2026-05-01T12:00Z) nor an age "
            "(30m, 12h, 7d)"
        ) from None


def _print_list(found: list[Capsule]) -> None:
    from capy.cli.tables import Table, print_table

    rows = [
        (
            capsule.id[:12],
            capsule.created_at[:19].replace("T", " "),
            capsule.kind,
            str(capsule.metadata.get("session_id", ""))[:12],
            _preview(capsule),
        )
        for capsule in found
    ]
    print_table(Table(("id", "created (UTC)", "kind", "session", "content"), rows))


def _preview(capsule: Capsule) -> str:
    if capsule.forgotten:
        return f"(forgotten: {capsule.forgotten_reason})"
    line = " ".join(capsule.content.split())
    return line if len(line) <= PREVIEW_CHARS else line[: PREVIEW_CHARS - 1] + "…"


def show(capsule_id: str, /, *, as_json: JsonFlag = False, path: PathOption = None) -> int:
    """One capsule whole: its fields, its place in the chain, its content.

    Parameters
    ----------
    capsule_id
        The capsule's id, or at least 6 of its first characters.
    as_json
        Print the capsule as JSON.
    path
        Capsule log to use instead of the default (also CAPY_CAPSULES_PATH).
    """

    def run() -> int:
        from capy.capsules import open_capsules
        from capy.cli.output import print_json

        with open_capsules(path) as capsules:
            drain_before_reading(capsules, path)
            _, capsule = capsules.find(capsule_id)
        if as_json:
            print_json(capsule.record())
            return 0
        scope = f"{capsule.scope.tenant}/{capsule.scope.project}"
        say(f"capsule {capsule.id}")
        say(f"  kind {capsule.kind}, source {capsule.source}, created {capsule.created_at}")
        say(f"  scope {scope}, seq {capsule.seq}, chain {capsule.chain_hash[:16]}")
        for key, value in sorted(capsule.metadata.items()):
            say(f"  {key}: {value}")
        if capsule.forgotten:
            say(f"  forgotten: {capsule.forgotten_reason}")
        say()
        say(capsule.content)
        return 0

    return guarded(run)
