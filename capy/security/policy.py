"""The permission decision: deny beats ask beats allow, across every settings file and the
security pack's built-in policies, with the rule and the file that decided.

Fail-closed choices (each keeps a guard at least as strict as the settings meant it to be):
- A deny (or ask) rule that cannot be parsed denies (or asks about) every call of its tool:
  the user meant to forbid something there and capy cannot tell what. A broken allow rule is
  dropped, which only ever means more asking.
- A settings file that cannot be read (invalid JSON, wrong shape) may have held deny rules, so
  while it is broken nothing is allowed outright: an `allow` becomes `ask`.
- For deny and ask, a command is judged whole and part by part, as written, with quotes removed,
  without leading `NAME=value` assignments, and as every command it runs through a wrapper
  (`timeout 5 rm -rf /`, `bash -c '...'`, see `capy.security.wrappers`); any match counts. A
  wrapper too long to read fail-closed makes the command ask. For allow, every part must match
  an allow rule as written or with the wrappers Claude Code strips (timeout, nice ...) removed.
  A path matches deny/ask if the path or its symlink target does; it is allowed only if both
  do. A URL that does not parse is denied.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from capy.rules.commands import normalise_command
from capy.security.permissions import (
    RULE_TOOLS_FOR,
    PermissionRule,
    RuleKind,
    parse_rule,
    path_candidates,
)
from capy.security.readings import command_readings
from capy.security.settings_files import (
    DECISION_LISTS,
    LoadedSettings,
    SettingsFile,
    read_settings,
    settings_places,
)
from capy.security.shellsplit import split_command
from capy.security.wrappers import allow_forms


class Outcome(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"
    NONE = "none"  # no rule decided: the agent's default behaviour applies


@dataclass(frozen=True)
class Decision:
    decision: Outcome
    rule: str | None = None  # the rule as written, or a built-in policy's id
    source: str | None = None  # the settings file, or the pack file and line
    part: str | None = None  # the command part, path or host the rule matched
    reason: str | None = None
    warnings: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "decision": str(self.decision),
            "rule": self.rule,
            "source": self.source,
            "part": self.part,
            "reason": self.reason,
            "warnings": list(self.warnings),
        }


@dataclass
class Policy:
    """Every permission rule in force for one project, highest precedence first."""

    project: Path  # the project root: where `.claude/settings*.json` live
    project_cwd: Path  # the working directory: what `./path` and `path` rules are relative to
    home: Path
    rules: list[PermissionRule] = field(default_factory=list)
    unreadable: list[LoadedSettings] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def shown(self, rule: PermissionRule) -> str:
        return rule.source.shown(self.project, self.home)

    def settings_rules(self, level: Outcome, tools: Iterable[str]) -> Iterator[PermissionRule]:
        wanted = set(tools)
        for rule in self.rules:
            if rule.decision != level or rule.tool not in wanted:
                continue
            if rule.broken and level is Outcome.ALLOW:
                continue  # ignoring a broken allow rule can only make capy ask more
            yield rule


_WARNED: set[str] = set()


def load_policy(
    project_dir: Path | None = None,
    *,
    home: Path | None = None,
    managed_dir: Path | None = None,
    ruleset: Any = None,
) -> Policy:
    """Read every Claude Code settings file for `project_dir` (default: the working directory).

    The parse is reused while no settings file changes (`capy.security.policy_memo`), so an
    edit takes effect on the next call and an unchanged project costs a few stat calls.
    `ruleset`, when given, says where the files are (else the packs in force are read).
    """
    from capy.config.paths import home_dir, project_root
    from capy.security.policy_memo import remembered_places, remembered_policy

    home = Path(home) if home else home_dir()

    def locate() -> tuple[tuple[Path, Path, list[SettingsFile]], Path | None]:
        cwd = (Path(project_dir) if project_dir else Path.cwd()).expanduser().resolve()
        project = project_root(cwd)
        files, drop_ins = settings_places(project, home, managed_dir, ruleset)
        return (cwd, project, files), drop_ins

    if ruleset is None:  # the packs in force are read each time: so are the places
        cwd, project, files = locate()[0]
    else:
        given = str(project_dir) if project_dir else os.getcwd()
        cwd, project, files = remembered_places(
            (given, str(home), str(managed_dir)), ruleset, locate
        )
    return remembered_policy(
        (str(cwd), str(project), str(home)),
        files,
        lambda: _parse_policy(Policy(project=project, project_cwd=cwd, home=home), files),
    )


def _parse_policy(policy: Policy, files: list[SettingsFile]) -> Policy:
    for file in files:
        loaded = read_settings(file)
        if loaded is None:
            continue
        if loaded.problem:
            policy.unreadable.append(loaded)
            message = f"{policy_file(loaded, policy)} {loaded.problem}; its rules are ignored"
            _warn(policy, message, key=f"{file.path}: {loaded.problem}")
            continue
        for level in DECISION_LISTS:
            for entry in loaded.rules[level]:
                rule = parse_rule(entry, level, file)
                policy.rules.append(rule)
                if rule.broken:
                    _warn(policy, _broken_message(rule, policy), key=f"{file.path}: {rule.text}")
    return policy


def policy_file(loaded: LoadedSettings, policy: Policy) -> str:
    return loaded.file.shown(policy.project, policy.home)


def _broken_message(rule: PermissionRule, policy: Policy) -> str:
    effect = {
        "deny": f"so every {rule.tool} call is denied until it is fixed",
        "ask": f"so every {rule.tool} call asks until it is fixed",
        "allow": "so it allows nothing",
    }[rule.decision]
    if rule.tool is None and rule.decision != "allow":
        effect = "and names no tool, so it is ignored"
    return f"{policy.shown(rule)}: {rule.decision} rule {rule.text} {rule.broken}, {effect}"


def _warn(policy: Policy, message: str, *, key: str) -> None:
    """One line on stderr per problem per process (a long-lived server does not repeat it)."""
    policy.warnings.append(message)
    if key not in _WARNED:
        _WARNED.add(key)
        print(f"capy: warning: {message}", file=sys.stderr)


def finish(policy: Policy, decision: Decision) -> Decision:
    """Attach warnings, and downgrade allow to ask while a settings file cannot be read."""
    if decision.decision is Outcome.ALLOW and policy.unreadable:
        broken = ", ".join(policy_file(item, policy) for item in policy.unreadable)
        decision = replace(
            decision,
            decision=Outcome.ASK,
            reason=f"allowed by {decision.rule}, but {broken} could not be read and may hold "
            "deny rules, so capy asks instead",
        )
    return replace(decision, warnings=tuple(policy.warnings))


# --- shell commands ---------------------------------------------------------------------------


def judge_shell(policy: Policy, ruleset: Any, command: str) -> Decision:
    """Deny or ask if any reading of the command or of a part matches; allow if every part is."""
    parts = split_command(command)
    if not parts:
        return Decision(Outcome.NONE, reason="the command is empty")
    wrappers = ruleset.view("security").command_wrappers
    part_readings, undecidable = command_readings(parts, wrappers)
    # The whole line is read as written only (patterns spanning operators, like a fork bomb or
    # `curl | sh`); quote removal on a megabyte of text would cost seconds and each part gets it.
    readings = list(dict.fromkeys([normalise_command(command), *part_readings]))
    for level in (Outcome.DENY, Outcome.ASK):
        found = _first_command_hit(policy, ruleset, level, readings)
        if found is not None:
            return found
    if undecidable:
        return Decision(
            Outcome.ASK,
            reason="a wrapper's arguments are too long or too deeply nested to read, so capy "
            "cannot tell what it runs and asks",
        )
    return _all_parts_allowed(policy, parts, wrappers)


def _first_command_hit(
    policy: Policy, ruleset: Any, level: Outcome, readings: list[str]
) -> Decision | None:
    # Readings are already whitespace-normalised, so the compiled patterns are matched directly
    # (a megabyte of distinct commands means hundreds of thousands of matches).
    settings_rules = list(policy.settings_rules(level, ("Bash",)))
    builtins = [
        builtin
        for builtin in ruleset.view("security").policies
        if builtin.active and builtin.tool == "Bash" and builtin.decision == level
    ]
    for reading in readings:
        for rule in settings_rules:
            if rule.broken or rule.matches_normalised(reading):
                return _from_rule(policy, rule, level, reading)
        for builtin in builtins:
            if builtin.regex.match(reading):
                source = builtin_source(ruleset, builtin.id)
                return Decision(level, builtin.id, source, reading, builtin.reason)
    return None


def _all_parts_allowed(policy: Policy, parts: list[str], wrappers: Any) -> Decision:
    first: Decision | None = None
    allow_rules = list(policy.settings_rules(Outcome.ALLOW, ("Bash",)))
    for part in parts:
        # Claude Code strips timeout, nice, nohup ... before matching allow rules too.
        forms = [part, *(allow_forms(part, wrappers) if wrappers is not None else ())]
        rule = next(
            (r for r in allow_rules if any(r.matches_command(form) for form in forms)), None
        )
        if rule is None:
            reason = "no rule decides this command"
            if len(parts) > 1:
                reason = f"no allow rule covers the part `{part}`, and every part must be allowed"
            return Decision(Outcome.NONE, part=part, reason=reason)
        first = first or _from_rule(policy, rule, Outcome.ALLOW, part)
    assert first is not None
    if len(parts) > 1:
        first = replace(first, reason=f"every one of the {len(parts)} parts is allowed")
    return first


def _from_rule(policy: Policy, rule: PermissionRule, level: Outcome, part: str) -> Decision:
    reason = f"the rule {rule.broken} and fails closed" if rule.broken else None
    return Decision(level, rule.text, policy.shown(rule), part, reason)


def builtin_source(ruleset: Any, rule_id: str) -> str:
    """The pack file a built-in policy comes from (an overlay's, if one overrides it).

    A file, not a line: a rule set read back from capy's cache carries no YAML positions, and
    the rule id already names the rule exactly.
    """
    from capy.rules.overlays import find_rule

    pack = ruleset.pack("security")
    found = find_rule(pack.data, rule_id)
    return pack.origin_file(found[0]).file if found else pack.base.file


# --- other tools ------------------------------------------------------------------------------


def judge_path(policy: Policy, tool: str, path: str) -> Decision:
    families = RULE_TOOLS_FOR[tool]
    candidates = path_candidates(path, policy.project_cwd, policy.home)
    for level in (Outcome.DENY, Outcome.ASK, Outcome.ALLOW):
        for rule in policy.settings_rules(level, families):
            matched = _path_match(policy, rule, candidates, every=level is Outcome.ALLOW)
            if matched is not None:
                return _from_rule(policy, rule, level, matched)
    return Decision(Outcome.NONE, part=candidates[0], reason="no rule decides this path")


def _path_match(
    policy: Policy, rule: PermissionRule, candidates: tuple[str, ...], *, every: bool
) -> str | None:
    if rule.broken or rule.kind is RuleKind.WHOLE_TOOL:
        return candidates[0]
    if rule.kind is not RuleKind.PATH:
        return None
    regex = rule.path_regex(policy.project_cwd, policy.home)
    hits = [candidate for candidate in candidates if regex.match(candidate)]
    if every and len(hits) != len(candidates):
        return None
    return hits[0] if hits else None


def judge_host(policy: Policy, host: str) -> Decision:
    for level in (Outcome.DENY, Outcome.ASK, Outcome.ALLOW):
        for rule in policy.settings_rules(level, ("WebFetch",)):
            if rule.broken or rule.matches_domain(host):
                return _from_rule(policy, rule, level, host)
    return Decision(Outcome.NONE, part=host, reason="no rule decides this host")


def judge_whole_tool(policy: Policy, tool: str) -> Decision:
    for level in (Outcome.DENY, Outcome.ASK, Outcome.ALLOW):
        for rule in policy.settings_rules(level, (tool,)):
            if rule.broken or rule.kind is RuleKind.WHOLE_TOOL:
                return _from_rule(policy, rule, level, tool)
    return Decision(Outcome.NONE, part=tool, reason="no rule decides this tool")
