"""Shared terminal output for CLI commands: one console, one-line errors, JSON.

Everything a command prints passes through `shown`: secrets redacted with the secrets pack
(unless the user turned `redaction.replies` off or a command's opt-out flag is in effect, and
then stderr says so once), and terminal control characters made visible, so stored content
cannot write the clipboard, retitle the window or clear the screen. `say` is `print` through
it; `error_line` and `print_json` apply it too.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache, lru_cache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Why secrets are shown as found right now (a command's opt-out flag), innermost last; and
# whether stderr has said so yet.
_shown_raw_because: list[str] = []
_said_unredacted: list[bool] = []
# What JSON encoding leaves raw although a terminal acts on it: DEL, C1 controls (C0 ones are
# always escaped) and the bidi controls. Inside a JSON string each may be written \uXXXX.
_JSON_RAW_CONTROLS = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@cache
def console():
    from rich.console import Console

    return Console(highlight=False)


@contextmanager
def secrets_shown(reason: str) -> Iterator[None]:
    """Print secrets as found inside the block (a person asked for it: `reason`)."""
    _shown_raw_because.append(reason)
    try:
        yield
    finally:
        _shown_raw_because.pop()
        _said_unredacted.clear()


def _where() -> tuple[str, ...]:
    """What the settings and rules in force depend on, to key their caches: one process may
    run several commands (tests do), from several folders."""
    names = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "CAPY_REDACTION__REPLIES")
    return (os.getcwd(), *(os.environ.get(name, "") for name in names))


def _setting_on(where: tuple[str, ...]) -> bool:
    from capy.cli.warm import current

    context = current()  # a warm start read the setting with the rest (capy.cli.warm)
    return context.redaction_replies if context is not None else _setting_read(where)


@lru_cache(maxsize=4)
def _setting_read(where: tuple[str, ...]) -> bool:
    from capy.security.redaction import redaction_wanted

    return redaction_wanted()


def _secrets(where: tuple[str, ...]):
    from capy.cli.warm import current

    context = current()
    return context.ruleset.view("secrets") if context is not None else _secrets_read(where)


@lru_cache(maxsize=4)
def _secrets_read(where: tuple[str, ...]):
    from pathlib import Path

    from capy.config.paths import project_root
    from capy.security.redaction import load_secrets_view, secrets_for_output

    return secrets_for_output(lambda: load_secrets_view(project_root(Path.cwd())))


def redaction_on() -> bool:
    return not _shown_raw_because and _setting_on(_where())


def _note_unredacted() -> None:
    """Say once, on stderr, that secrets are printed as found."""
    if _said_unredacted:
        return
    _said_unredacted.append(True)
    from capy.security.redaction import not_redacted_note

    why = _shown_raw_because[-1] if _shown_raw_because else None
    note = not_redacted_note(why) if why else not_redacted_note()
    print(f"capy: {note}", file=sys.stderr)


def shown(text: Any, *, redact: bool = True) -> str:
    """`text` as a person may see it: redacted (unless opted out) and with controls visible.
    `redact=False` is for text a person must see as written (their own rule files)."""
    from capy.security.controls import neutralise_controls

    text = str(text)
    return neutralise_controls(redacted(text) if redact else text)


def redacted(text: str) -> str:
    """`text` with its secrets masked, unless redaction is off (then stderr says so once);
    for text that is cut before it is printed, so that the cut cannot split a secret."""
    from capy.security.redaction import redact as redact_secrets

    if not redaction_on():
        _note_unredacted()
        return text
    return redact_secrets(text, secrets=_secrets(_where())).text


def say(text: Any = "", *, file: Any = None, end: str = "\n", redact: bool = True) -> None:
    """`print` for anything that may hold stored or produced text."""
    print(shown(text, redact=redact), file=file if file is not None else sys.stdout, end=end)


def error_line(message: str) -> None:
    """Errors a person sees are one sentence, on stderr, prefixed so scripts can grep them.

    When the rule packs themselves cannot be loaded (the error may be about them), the
    message, capy's own sentence, is shown with its controls neutralised only."""
    from capy.security.controls import neutralise_controls

    try:
        message = shown(message)
    except Exception:
        message = neutralise_controls(message)
    print(f"capy: {message}", file=sys.stderr)


def print_json(data: Any) -> None:
    if redaction_on():
        from capy.security.redaction import redact_value

        data = redact_value(_plain(data), secrets=_secrets(_where()))
    else:
        _note_unredacted()
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    print(_JSON_RAW_CONTROLS.sub(lambda match: f"\\u{ord(match.group()):04x}", text))


def _plain(data: Any) -> Any:
    """`data` as JSON would encode it, so strings inside other objects get redacted too."""
    return json.loads(json.dumps(data, default=str))


@contextmanager
def progress_bar(label: str, *, quiet: bool = False) -> Iterator[Callable[[int, int], None] | None]:
    """A transient bar on stderr fed by (done, total) callbacks, for a person at a terminal.

    Yields None when quiet or off a terminal (a pipe, CI, a test): a bar there is noise in
    someone's log, and callers skip the reporting work.
    """
    if quiet or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)
