"""What `capy setup` would change: every file's text before and after, computed before any write.

A plan is built whole first, so a malformed file anywhere stops the run with nothing written.
"""

from __future__ import annotations

import copy
import difflib
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capy.setup import merge, toml_text
from capy.setup.documents import SetupError, has_comments, parse_json, render_json
from capy.setup.entries import (
    capy_hooks,
    hook_commands,
    is_capy_server,
    no_mcp_hooks,
    server_entry,
)

if TYPE_CHECKING:
    from capy.rules.views.platforms import ConfigFile, Platform, PlatformsPack


# Not a scope of the pack: every one of them at once, which only undoing (uninstall) uses.
EVERY_SCOPE = "every"


@dataclass
class FileChange:
    """One configuration file: its text before (None: absent) and after (None: delete it)."""

    path: Path
    shown: str
    before: str | None
    after: str | None
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile="/dev/null" if self.before is None else f"a/{self.shown}",
            tofile="/dev/null" if self.after is None else f"b/{self.shown}",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass
class SetupPlan:
    platform: Platform
    scope: str
    undo: bool
    changes: list[FileChange]
    notes: list[str]

    @property
    def pending(self) -> list[FileChange]:
        return [change for change in self.changes if change.changed]


@dataclass
class _Target:
    file: ConfigFile
    undo: bool
    edits: list[tuple[str, Any]] = field(default_factory=list)


def plan_setup(
    pack: PlatformsPack,
    platform: Platform,
    *,
    project_dir: Path,
    home: Path,
    launcher: list[str],
    scope: str = "local",
    undo: bool = False,
    mcp_hooks: bool = False,
) -> SetupPlan:
    if mcp_hooks and platform.config.mcp_hooks is None:
        raise no_mcp_hooks(platform)
    if scope == EVERY_SCOPE and not undo:
        raise SetupError("capy setup writes one scope at a time; every scope is for undoing")
    notes: list[str] = []
    fallbacks: dict[str, list[tuple[str, str]]] = {}
    targets: dict[Path, _Target] = {}
    for part, files in (("MCP server", platform.config.mcp), ("hooks", platform.config.hooks)):
        chosen = _files_of_scope(pack, platform, part, files, scope, notes, fallbacks)
        # Setup writes the preferred file; undo cleans every file of the scope.
        for file in chosen if undo else chosen[:1]:
            path = resolve(file.path, project_dir, home)
            target = targets.setdefault(path, _Target(file, undo))
            target.edits.append(
                _edit_for(pack, platform, file, part, undo, mcp_hooks, launcher, project_dir)
            )
    changes = [_plan_file(path, target, project_dir, home) for path, target in targets.items()]
    if not undo:
        notes += _fallback_notes(platform, fallbacks)
        for change, target in zip(changes, targets.values(), strict=True):
            if change.changed and target.file.note:
                notes.append(f"{change.shown}: {target.file.note}")
    spec = platform.config.mcp_hooks
    if mcp_hooks and not undo and spec and spec.note and any(c.changed for c in changes):
        notes.append(spec.note)
    return SetupPlan(platform, scope, undo, changes, notes)


def _files_of_scope(
    pack: PlatformsPack,
    platform: Platform,
    part: str,
    files: tuple[ConfigFile, ...],
    scope: str,
    notes: list[str],
    fallbacks: dict[str, list[tuple[str, str]]],
) -> list[ConfigFile]:
    """The files of `scope` for one part. A platform with no local file gets the pack's
    fallback scope, or failing that its project file; `fallbacks` records which, to say so."""
    if scope == EVERY_SCOPE:  # `capy uninstall`: every file the pack names, whatever its scope
        return list(files)
    chosen = [file for file in files if file.scope == scope]
    if chosen or scope != "local":
        if not chosen:
            notes.append(f"{platform.name} has no {scope}-scope file for its {part} in the pack")
        return chosen
    for kind in (pack.local_fallback_scope, "project"):
        chosen = [file for file in files if file.scope == kind]
        if chosen:
            fallbacks.setdefault(kind, []).append((part, chosen[0].path))
            return chosen
    notes.append(f"{platform.name} has no file for its {part} in the pack")
    return []


def _fallback_notes(platform: Platform, fallbacks: dict[str, list[tuple[str, str]]]) -> list[str]:
    """One sentence per fallback: what has no uncommitted project file, and what capy used."""
    notes = []
    for kind, used in fallbacks.items():
        parts = " and ".join(part for part, _ in used)
        paths = " and ".join(path for _, path in used)
        if kind == "user":
            notes.append(
                f"{platform.name} has no project file for its {parts} that stays out of git, "
                f"so capy used {paths} (your own settings, for every project); `--shared` "
                "writes the project's files instead"
            )
        else:
            notes.append(
                f"{platform.name} has no personal file for its {parts}, so capy used {paths}, "
                "which may be committed: keep it out of git, or your team needs capy at the "
                "same command"
            )
    return notes


def resolve(path: str, project_dir: Path, home: Path) -> Path:
    return home / path[2:] if path.startswith("~/") else project_dir / path


def shown_path(path: Path, project_dir: Path, home: Path) -> str:
    if path.is_relative_to(project_dir):
        return path.relative_to(project_dir).as_posix()
    if path.is_relative_to(home):
        return "~/" + path.relative_to(home).as_posix()
    return str(path)


def _edit_for(
    pack: PlatformsPack,
    platform: Platform,
    file: ConfigFile,
    part: str,
    undo: bool,
    mcp_hooks: bool,
    launcher: list[str],
    project_dir: Path,
):
    steps = file.key_steps(project_dir)
    if part == "MCP server":
        if file.shape != "servers":
            raise _unknown_layout(platform, file)
        name, entry = server_entry(pack, platform, file, launcher, mcp_hooks=mcp_hooks)

        def ours(current: Any) -> bool:
            return is_capy_server(pack, platform, file, current)

        if file.format == "toml":
            key = ".".join(steps)
            if undo:
                return (
                    "toml",
                    lambda text, shown: toml_text.remove_table(text, shown, key, name, ours),
                )
            return (
                "toml",
                lambda text, shown: toml_text.add_table(text, shown, key, name, entry, ours),
            )
        if undo:
            return ("json", lambda doc, shown: merge.remove_server(doc, steps, shown, name, ours))
        return ("json", lambda doc, shown: merge.add_server(doc, steps, shown, name, entry, ours))
    if file.shape == "plugin-module":
        return ("module", plugin_module(pack, platform, launcher))
    if file.shape not in merge.HOOK_SHAPES or file.format not in ("json", "jsonc"):
        raise _unknown_layout(platform, file)
    hooks = capy_hooks(pack, platform, file, launcher, mcp_hooks=mcp_hooks, undo=undo)
    return ("json", lambda doc, shown: merge.sync_hooks(doc, file, steps, shown, hooks))


def _unknown_layout(platform: Platform, file: ConfigFile) -> SetupError:
    return SetupError(
        f"the platforms pack does not say how {platform.name}'s {file.path} is laid out "
        "(its `shape` is missing or unsupported for this file); capy cannot register there. "
        "Nothing was written."
    )


def _plan_file(path: Path, target: _Target, project_dir: Path, home: Path) -> FileChange:
    shown = shown_path(path, project_dir, home)
    before = _read(path, shown)
    kinds = {kind for kind, _ in target.edits}
    notes: list[str] = []
    if kinds == {"toml"}:
        text = before or ""
        for _, edit in target.edits:
            text, more = edit(text, shown)
            notes += more
        after = text
        return FileChange(path, shown, before, after or None, notes)
    if kinds == {"module"}:
        return _plan_module(path, shown, before, target)
    return _plan_json(path, shown, before, target)


def _plan_json(path: Path, shown: str, before: str | None, target: _Target) -> FileChange:
    file = target.file
    jsonc = file.format == "jsonc"
    if before is None:
        doc = copy.deepcopy(dict(file.scaffold))
    else:
        doc = parse_json(before, shown, jsonc=jsonc)
    original = copy.deepcopy(doc)
    notes: list[str] = []
    for _, edit in target.edits:
        notes += edit(doc, shown)
    if doc == original:
        return FileChange(path, shown, before, before, notes)
    if before is not None and jsonc and has_comments(before):
        raise _comments_error(shown, original, doc, target.undo)
    if target.undo and doc in ({}, dict(file.scaffold)):
        return FileChange(path, shown, before, None, notes)  # only capy's scaffold was left
    if before is None or not before.strip():
        return FileChange(path, shown, before, render_json(doc, None), notes)
    return FileChange(path, shown, before, _edited(before, original, doc, shown, target), notes)


def _edited(before: str, original: dict, doc: dict, shown: str, target: _Target) -> str:
    """The file's own text with only capy's keys changed; anything else is the user's, byte for
    byte. A layout the editor cannot follow is refused rather than reformatted."""
    from capy.setup.json_text import JsonLayoutError, edit_json_text

    try:
        after = edit_json_text(before, original, doc)
        ok = parse_json(after, shown, jsonc=target.file.format == "jsonc") == doc
    except (JsonLayoutError, SetupError):
        ok = False
    if not ok:
        change = (
            "remove capy's entries by hand"
            if target.undo
            else (f"add this by hand:\n{json.dumps(_difference(original, doc), indent=2)}")
        )
        raise SetupError(
            f"{shown} is laid out in a way capy cannot edit without reformatting it; {change}\n"
            "Nothing was written."
        )
    return after


def _comments_error(shown: str, original: dict, doc: dict, undo: bool) -> SetupError:
    change = "remove capy's entries by hand"
    if not undo:
        change = f"add this by hand:\n{json.dumps(_difference(original, doc), indent=2)}"
    return SetupError(
        f"{shown} has comments that capy would lose by rewriting it; {change}\nNothing was written."
    )


def _plan_module(path: Path, shown: str, before: str | None, target: _Target) -> FileChange:
    content = target.edits[0][1]  # the whole module is capy's
    ours = before is not None and plugin_commands(before) is not None
    if not target.undo:
        notes = [] if before is None or ours else [f"{shown} was replaced by the current plugin"]
        return FileChange(path, shown, before, content, notes)
    if before is None or ours:
        return FileChange(path, shown, before, None)
    return FileChange(path, shown, before, before, [f"{shown} was changed by hand; left in place"])


def _difference(original: dict, updated: dict) -> dict:
    return {key: value for key, value in updated.items() if original.get(key) != value}


PLUGIN_COMMANDS = "__CAPY_COMMANDS__"


def plugin_module(pack: PlatformsPack, platform: Platform, launcher: list[str]) -> str:
    """The plugin module text for a `plugin` transport platform, with its commands filled in."""
    import shlex

    commands = hook_commands(pack, platform, launcher)
    argv = {event: shlex.split(command) for event, command in commands.items()}
    return plugin_template().replace(PLUGIN_COMMANDS, json.dumps(argv, indent=2))


def plugin_template() -> str:
    return resources.files("capy.setup").joinpath("opencode_plugin.js").read_text("utf-8")


def plugin_commands(text: str) -> dict[str, list[str]] | None:
    """The event -> argv table of a module capy setup wrote (any install's), or None when the
    module is not capy's plugin as shipped."""
    head, _, tail = plugin_template().partition(PLUGIN_COMMANDS)
    if not (text.startswith(head) and text.endswith(tail)) or len(text) < len(head) + len(tail):
        return None
    try:
        table = json.loads(text[len(head) : len(text) - len(tail)])
    except ValueError:
        return None
    return table if isinstance(table, dict) else None


def _read(path: Path, shown: str) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")  # CRLF kept as it is
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise SetupError(
            f"{shown} cannot be read ({type(error).__name__}); check its permissions, then run "
            "capy setup again. Nothing was written."
        ) from None
