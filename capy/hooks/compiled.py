"""The hook's own compact rules cache: platforms, routing and hook settings as plain JSON.

A hook is a fresh process on every tool call, and the typed views (pydantic) plus settings
loading (pydantic-settings) cost several times a bare Python start. So the first hook of a
project builds the little it needs from the full rule set and settings, and writes it here with
the list of every file that went into it (shipped packs and schemas, overlays, config files and
their folders) and each file's (mtime_ns, size), the same test Python uses for its .pyc files.
Later hooks stat those files and read one small JSON file. A rule set with errors is cached too,
as the error text, so a broken overlay costs one stat pass per call, not a full validation.
"""

from __future__ import annotations

import os
import zlib

from capy import __version__
from capy.leanjson import dumps
from capy.watched import cache_dir as _cache_root
from capy.watched import environment, is_fresh, read_entry, watch_list, write_entry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

# 3: project config and overlays are judged, and the trust file is watched; an older entry may
# hold what an untrusted project set, so none is read again. 4: capture rules and detectors.
# 5: the detectors file is marshal data, and the drainer's niceness is in the capture rules.
# 6: the drainer's niceness is top level: SessionEnd starts the drainer with capture off too.
# 7: the detectors file is top level: the session's events are kept redacted with capture off.
CACHE_FORMAT = 7
_HOOK_PACKS = ("platforms", "routing")


class HookRulesError(Exception):
    """The packs or settings in force have errors; hooks pass every call through."""


def load_hook_rules(start: str) -> dict[str, Any]:
    """The compact rules for the working directory `start`; raises HookRulesError when broken.

    Entries are looked up by directory and environment; the entry records both in full, so a
    file-name collision only costs a rebuild.
    """
    inputs = _inputs(start)
    path = os.path.join(cache_dir(), f"{zlib.crc32(dumps(inputs).encode()):08x}.json")
    entry = read_entry(path, CACHE_FORMAT)
    if entry is None or entry.get("inputs") != inputs or not is_fresh(entry.get("watch", [])):
        entry = build_entry(start)
        entry["inputs"] = inputs
        write_entry(path, entry)
    if entry.get("error"):
        raise HookRulesError(entry["error"])
    return entry["data"]


def cache_dir() -> str:
    return _cache_root("hooks")


def _inputs(start: str) -> list[Any]:
    return [__version__, CACHE_FORMAT, str(start), environment()]


# --- the slow path: full settings and rule set ------------------------------------------------


def build_entry(start: str) -> dict[str, Any]:
    """Build the compact rules (or the error) and the list of files they depend on."""
    from pathlib import Path

    from capy.config import ConfigError
    from capy.config.paths import project_root
    from capy.watched import config_inputs, overlay_inputs, shipped_inputs

    root = project_root(Path(start))

    # Listed before loading, so that whatever fails, fixing the file invalidates the entry.
    watched = [*shipped_inputs(), *config_inputs(root)]
    try:
        watched += overlay_inputs(root)
        data = _compact(root)
        # The detectors file: gone or changed, the entry is rebuilt.
        watched.append(data["secrets_file"])
    except HookRulesError as error:
        return _entry(watched, error=str(error))
    except ConfigError as error:
        first = str(error).splitlines()[0] if str(error) else "invalid configuration"
        return _entry(watched, error=f"capy's configuration has errors ({first})")
    return _entry(watched, data=data)


def _entry(watched: list[Path], *, data: Any = None, error: str | None = None) -> dict[str, Any]:
    return {
        "format": CACHE_FORMAT,
        "watch": watch_list(watched),
        "data": data,
        "error": error,
    }


def _compact(root: Path) -> dict[str, Any]:
    from capy.config import load_settings
    from capy.hooks.routing import COMMAND_REGEX
    from capy.rules import RulesError, load_rules

    settings = load_settings(root).settings
    try:
        ruleset = load_rules(root)
    except RulesError as error:
        raise HookRulesError(str(error)) from None
    packs = {name: _trimmed(in_force(ruleset.pack(name).data)) for name in _HOOK_PACKS}
    routing = packs["routing"]
    for rule in [*routing["pre_tool_actions"], *routing["escape_hatches"]["allow_commands"]]:
        if rule.get("kind") == "command":
            rule["kind"], rule["pattern"] = COMMAND_REGEX, command_regex_source(rule["pattern"])
    hooks = settings.hooks
    from capy.hooks.capture_rules import compact_capture, write_detectors

    secrets_file = write_detectors(ruleset)
    return {
        "project_root": str(root),
        "data_dir": str(settings.data_dir),
        "platforms": {
            entry["key"]: {name: entry[name] for name in _PLATFORM_KEYS if name in entry}
            for entry in packs["platforms"]["platforms"]
        },
        "routing": packs["routing"],
        "secrets_file": secrets_file,
        "capture": compact_capture(ruleset, enabled=hooks.capture, secrets_file=secrets_file),
        "background_niceness": ruleset.view("capsules").worker.background_niceness,
        "settings": {
            "guidance": hooks.guidance,
            "session_start_max_bytes": hooks.session_start_max_bytes,
            "allow_commands": [command_regex_source(item) for item in hooks.allow_commands],
            "allow_domains": list(hooks.allow_domains),
        },
    }


def command_regex_source(pattern: str) -> str:
    """A permission-rule command pattern as a regex source the hook can compile alone."""
    import re

    from capy.rules.commands import command_pattern_regex

    compiled = command_pattern_regex(pattern)
    return f"(?s){compiled.pattern}" if compiled.flags & re.DOTALL else compiled.pattern


def in_force(node: Any) -> Any:
    """Drop every rule that is not active or experimental, as the typed views do."""
    if isinstance(node, dict):
        return {key: in_force(value) for key, value in node.items()}
    if isinstance(node, list):
        return [
            in_force(item)
            for item in node
            if not (isinstance(item, dict) and "id" in item and item.get("status") not in _LIVE)
        ]
    return node


_LIVE = ("active", "experimental")
# What hooks read of a platform; its config files and docs are for `capy setup`.
_PLATFORM_KEYS = ("key", "events", "tools", "input_fields", "mcp_tool_name", "input", "output")
# Documentation a hook never reads: left out to keep the per-call read small.
_DOC_KEYS = frozenset({"description", "examples", "docs", "since", "status", "note"})


def _trimmed(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: _trimmed(value) for key, value in node.items() if key not in _DOC_KEYS}
    if isinstance(node, list):
        return [_trimmed(item) for item in node]
    return node
