"""Claude Code permission rules (`Tool` or `Tool(specifier)`) parsed and matched as it documents.

- A bare tool name, or `Tool(*)`, matches every use of the tool.
- Bash: Claude Code's command patterns (`capy.rules.commands`, where each form is cited):
  `*` anywhere, a sole trailing ` *` or `:*` that also matches the bare command, `\\*` literal.
- Read/Edit/Write: gitignore-style globs with anchors: `//abs` from the filesystem root, `~/p`
  from the home directory, `/p` relative to the settings file's root (the folder holding
  `.claude/`), `./p` or `p` relative to the working directory. A pattern without a slash matches
  at any depth, and a pattern naming a folder covers everything inside it.
- WebFetch: `domain:example.com` (exact host) or `domain:*.example.com` (its subdomains).

A rule that cannot be parsed is kept with `broken` set, so the policy can fail closed on it.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from pathlib import Path

from capy.rules.commands import command_pattern_regex, normalise_command
from capy.security.settings_files import SettingsFile

_RULE = re.compile(r"^(?P<tool>[A-Za-z_][\w.-]*)(?:\((?P<spec>.*)\))?$", re.DOTALL)
_TOOL_NAME = re.compile(r"^\s*(?P<tool>[A-Za-z_][\w.-]*)")

# Claude Code's documented families: "Edit rules apply to all built-in tools that edit files",
# and Read rules apply, best effort, "to all built-in tools that read files like Grep, Glob, LS".
RULE_TOOLS_FOR = {
    "Read": ("Read",),
    "Grep": ("Read", "Grep"),
    "Glob": ("Read", "Glob"),
    "LS": ("Read", "LS"),
    "NotebookRead": ("Read", "NotebookRead"),
    "Edit": ("Edit", "Write"),
    "Write": ("Edit", "Write"),
    "MultiEdit": ("Edit", "Write", "MultiEdit"),
    "NotebookEdit": ("Edit", "Write", "NotebookEdit"),
}
PATH_RULE_TOOLS = frozenset({"Read", "Edit", "Write"})
# Settings rules and the packs' built-in policies read Bash patterns the same way.
command_rule_regex = command_pattern_regex


class RuleKind(StrEnum):
    WHOLE_TOOL = "whole-tool"
    COMMAND = "command"
    PATH = "path"
    DOMAIN = "domain"
    OTHER = "other"


@dataclass(frozen=True)
class PermissionRule:
    text: str  # as written in the settings file
    decision: str  # the list it sits in: deny | ask | allow
    tool: str | None
    kind: RuleKind
    specifier: str | None
    source: SettingsFile
    broken: str | None = None  # why the rule cannot be parsed

    @cached_property
    def _command_regex(self) -> re.Pattern[str]:
        return command_rule_regex(self.specifier or "")

    def matches_command(self, command: str) -> bool:
        return self.matches_normalised(normalise_command(command))

    def matches_normalised(self, command: str) -> bool:
        """For a command whose whitespace is already collapsed (`normalise_command`)."""
        if self.kind is RuleKind.WHOLE_TOOL:
            return True
        return self.kind is RuleKind.COMMAND and bool(self._command_regex.match(command))

    def matches_domain(self, host: str) -> bool:
        if self.kind is RuleKind.WHOLE_TOOL:
            return True
        if self.kind is not RuleKind.DOMAIN or not self.specifier:
            return False
        pattern = self.specifier.removeprefix("domain:").strip().rstrip(".").lower()
        return host == pattern or ("*" in pattern and fnmatch.fnmatchcase(host, pattern))

    def path_regex(self, cwd: Path, home: Path) -> re.Pattern[str]:
        return path_rule_regex(self.specifier or "", cwd=cwd, home=home, root=self.source.root)


def parse_rule(entry: object, decision: str, source: SettingsFile) -> PermissionRule:
    """Parse one settings entry; never raises (a bad entry comes back with `broken` set)."""
    if not isinstance(entry, str):
        return _broken(repr(entry), decision, source, None, "is not a string")
    text = entry.strip()
    match = _RULE.match(text)
    if match is None:
        name = _TOOL_NAME.match(text)
        tool = name.group("tool") if name else None
        return _broken(text, decision, source, tool, "is not `Tool` or `Tool(specifier)`")
    tool, spec = match.group("tool"), match.group("spec")
    if spec is None or spec.strip() == "*":
        return PermissionRule(text, decision, tool, RuleKind.WHOLE_TOOL, None, source)
    if not spec.strip():
        return _broken(text, decision, source, tool, "has an empty specifier `()`")
    return _specific(text, decision, source, tool, spec.strip())


def _specific(
    text: str, decision: str, source: SettingsFile, tool: str, spec: str
) -> PermissionRule:
    if tool == "Bash":
        return PermissionRule(text, decision, tool, RuleKind.COMMAND, spec, source)
    if tool in PATH_RULE_TOOLS:
        if spec.startswith("!"):
            return _broken(text, decision, source, tool, "negates a path (`!`), which rules cannot")
        try:
            path_rule_regex(spec, cwd=Path("/"), home=Path("/"), root=Path("/"))
        except re.error:
            return _broken(text, decision, source, tool, "has a glob that does not compile")
        return PermissionRule(text, decision, tool, RuleKind.PATH, spec, source)
    if tool == "WebFetch":
        if not spec.startswith("domain:") or not spec.removeprefix("domain:").strip():
            return _broken(text, decision, source, tool, "is not `WebFetch(domain:HOST)`")
        return PermissionRule(text, decision, tool, RuleKind.DOMAIN, spec, source)
    return PermissionRule(text, decision, tool, RuleKind.OTHER, spec, source)


def _broken(
    text: str, decision: str, source: SettingsFile, tool: str | None, why: str
) -> PermissionRule:
    return PermissionRule(text, decision, tool, RuleKind.WHOLE_TOOL, None, source, broken=why)


def path_rule_regex(spec: str, *, cwd: Path, home: Path, root: Path) -> re.Pattern[str]:
    """Compile a Read/Edit path specifier into a regex over absolute POSIX paths."""
    # gitignore's trailing `/` (folders only) is read broadly: `secrets/` also covers a file
    # named `secrets`, so a deny rule can never miss because capy could not tell the two apart.
    base, pattern, anchored = _anchor(spec, cwd=cwd, home=home, root=root)
    pattern = pattern.strip("/") if anchored else pattern.rstrip("/")
    anchored = anchored or "/" in pattern
    base = re.escape(base.rstrip("/"))
    if not pattern:
        return re.compile(f"^{base}(?:/.*)?$", re.DOTALL)
    body = glob_regex(pattern) if anchored else f"(?:.*/)?{glob_regex(pattern)}"
    return re.compile(f"^{base}/{body}(?:/.*)?$", re.DOTALL)


def _anchor(spec: str, *, cwd: Path, home: Path, root: Path) -> tuple[str, str, bool]:
    """The base folder, the rest of the pattern, and whether the pattern is anchored to it."""
    if spec.startswith("//"):
        return "/", spec[2:], True
    if spec == "~" or spec.startswith("~/"):
        return home.as_posix(), spec[2:], True
    if spec.startswith("/"):
        return root.as_posix(), spec[1:], True
    return cwd.as_posix(), spec.removeprefix("./"), False


def glob_regex(pattern: str) -> str:
    """gitignore glob to regex: `**` crosses folders, `*` and `?` and `[...]` stay within one."""
    out, index = [], 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        else:
            piece, index = _glob_piece(pattern, index)
            out.append(piece)
    return "".join(out)


def _glob_piece(pattern: str, index: int) -> tuple[str, int]:
    char = pattern[index]
    if char == "*":
        return "[^/]*", index + 1
    if char == "?":
        return "[^/]", index + 1
    if char == "\\" and index + 1 < len(pattern):
        return re.escape(pattern[index + 1]), index + 2
    if char == "[":
        end = pattern.find("]", index + 2)
        if end > 0:
            inner = pattern[index + 1 : end]
            negate = inner[:1] in ("!", "^")
            inner = inner[1:] if negate else inner
            return f"[{'^/' if negate else ''}{_class_body(inner)}]", end + 1
    return re.escape(char), index + 1


def _class_body(inner: str) -> str:
    """Escape a `[...]` body, keeping `a-z` ranges (a lone or doubled `-` is a literal)."""
    out = []
    for index, char in enumerate(inner):
        is_range = (
            char == "-"
            and 0 < index < len(inner) - 1
            and inner[index - 1] != "-"
            and inner[index + 1] != "-"
        )
        out.append("-" if is_range else re.escape(char))
    return "".join(out)


def path_candidates(path: str, cwd: Path, home: Path) -> tuple[str, ...]:
    """The path as written (made absolute, `..` folded) and where symlinks really lead."""
    expanded = home.as_posix() + path[1:] if path == "~" or path.startswith("~/") else path
    absolute = os.path.normpath(os.path.join(cwd.as_posix(), expanded))
    real = os.path.realpath(absolute)
    return (absolute,) if real == absolute else (absolute, real)
