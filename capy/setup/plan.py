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
from capy.setup.entries import capy_hooks, hook_commands, no_mcp_hooks, server_entry

if TYPE_CHECKING:
    from capy.rules.views.platforms import ConfigFile, Platform, PlatformsPack


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
    user_scope: bool = False,
    undo: bool = False,
    mcp_hooks: bool = False,
) -> SetupPlan:
    if mcp_hooks and platform.config.mcp_hooks is None:
        raise no_mcp_hooks(platform)
    scope = "user" if user_scope else "project"
    notes: list[str] = []
    targets: dict[Path, _Target] = {}
    for part, files in (("MCP server", platform.config.mcp), ("hooks", platform.config.hooks)):
        chosen = [file for file in files if file.scope == scope]
        if not chosen:
            notes.append(f"{platform.name} has no {scope}-scope file for its {part} in the pack")
            continue
        # Setup writes the preferred file; undo cleans every file of the scope.
        for file in chosen if undo else chosen[:1]:
            path = resolve(file.path, project_dir, home)
            target = targets.setdefault(path, _Target(file, undo))
            target.edits.append(_edit_for(pack, platform, file, part, undo, mcp_hooks))
    changes = [_plan_file(path, target, project_dir, home) for path, target in targets.items()]
    spec = platform.config.mcp_hooks
    if mcp_hooks and not undo and spec and spec.note and any(c.changed for c in changes):
        notes.append(spec.note)
    return SetupPlan(platform, scope, undo, changes, notes)


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
):
    if part == "MCP server":
        if file.shape != "servers":
            raise _unknown_layout(platform, file)
        name, entry = server_entry(pack, file)
        if file.format == "toml":
            change = toml_text.remove_table if undo else toml_text.add_table
            return ("toml", lambda text, shown: change(text, shown, file.key or "", name, entry))
        action = merge.remove_server if undo else merge.add_server
        return ("json", lambda doc, shown: action(doc, file, shown, name, entry))
    if file.shape == "plugin-module":
        return ("module", plugin_module(pack, platform))
    if file.shape not in merge.HOOK_SHAPES or file.format not in ("json", "jsonc"):
        raise _unknown_layout(platform, file)
    hooks = capy_hooks(pack, platform, file, mcp_hooks=mcp_hooks, undo=undo)
    return ("json", lambda doc, shown: merge.sync_hooks(doc, file, shown, hooks))


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
    return FileChange(path, shown, before, render_json(doc, before), notes)


def _comments_error(shown: str, original: dict, doc: dict, undo: bool) -> SetupError:
    change = "remove capy's entries by hand"
    if not undo:
        change = f"add this by hand:\n{json.dumps(_difference(original, doc), indent=2)}"
    return SetupError(
        f"{shown} has comments that capy would lose by rewriting it; {change}\nNothing was written."
    )


def _plan_module(path: Path, shown: str, before: str | None, target: _Target) -> FileChange:
    content = target.edits[0][1]  # the whole module is capy's
    if not target.undo:
        notes = [] if before in (None, content) else [f"{shown} was replaced by the current plugin"]
        return FileChange(path, shown, before, content, notes)
    if before is None or before == content:
        return FileChange(path, shown, before, None)
    return FileChange(path, shown, before, before, [f"{shown} was changed by hand; left in place"])


def _difference(original: dict, updated: dict) -> dict:
    return {key: value for key, value in updated.items() if original.get(key) != value}


def plugin_module(pack: PlatformsPack, platform: Platform) -> str:
    """The plugin module text for a `plugin` transport platform, with its commands filled in."""
    import shlex

    template = resources.files("capy.setup").joinpath("opencode_plugin.js").read_text("utf-8")
    commands = {event: shlex.split(cmd) for event, cmd in hook_commands(pack, platform).items()}
    return template.replace("__CAPY_COMMANDS__", json.dumps(commands, indent=2))


def _read(path: Path, shown: str) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise SetupError(
            f"{shown} cannot be read ({type(error).__name__}); check its permissions, then run "
            "capy setup again. Nothing was written."
        ) from None
