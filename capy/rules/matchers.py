"""The registry of detecting-rule kinds: each `kind` a rule declares maps to the code here.

The JSON Schema enum `matcher_kind` in schemas/common.v1.schema.json is generated from MATCHERS
(`capy rules gen`), so a kind exists in the schema exactly when the engine can interpret it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from capy.rules.commands import command_pattern_regex
from capy.rules.secretscan import SecretDetector, compile_detector


class RuleCompileError(Exception):
    """A rule's fields cannot be turned into a working matcher."""

    def __init__(self, field: str, message: str, hint: str | None = None):
        super().__init__(message)
        self.field = field
        self.message = message
        self.hint = hint


class CompiledRule(Protocol):
    def matches(self, text: str) -> bool: ...


@dataclass(frozen=True)
class RegexRule:
    pattern: re.Pattern[str]

    def matches(self, text: str) -> bool:
        return self.pattern.search(text) is not None


@dataclass(frozen=True)
class SecretRule:
    detector: SecretDetector

    def matches(self, text: str) -> bool:
        return bool(self.detector.find(text))


def compile_regex(value: str, field: str = "pattern") -> re.Pattern[str]:
    try:
        return re.compile(value)
    except re.error as exc:
        raise RuleCompileError(
            field,
            f"{field} does not compile: {exc.msg} at position {exc.pos}",
            "Python `re` syntax; escape literal brackets and backslashes",
        ) from None


def _compile_regex_rule(rule: Mapping[str, Any], pack: Mapping[str, Any]) -> CompiledRule:
    return RegexRule(compile_regex(rule["pattern"]))


def _compile_command_rule(rule: Mapping[str, Any], pack: Mapping[str, Any]) -> CompiledRule:
    return RegexRule(command_pattern_regex(rule["pattern"]))


def _compile_secret_rule(rule: Mapping[str, Any], pack: Mapping[str, Any]) -> CompiledRule:
    try:
        return SecretRule(compile_detector(rule, pack.get("global_allowlist", ())))
    except re.error as exc:
        raise RuleCompileError("pattern", f"a regex does not compile: {exc.msg}") from None


@dataclass(frozen=True)
class ArgvRule:
    """A command judged by its shell words: the words (after leading `NAME=value` assignments)
    match one of the command patterns, and, when a `word` regex is given, some single word after
    the program matches it, so a flag quoted inside a message (`-m 'add --no-verify'`) is not
    the flag itself."""

    commands: tuple[re.Pattern[str], ...]
    word: re.Pattern[str] | None

    def matches(self, text: str) -> bool:
        import shlex

        try:
            words = shlex.split(text, comments=False, posix=True)
        except ValueError:
            words = text.split()
        while words and _ASSIGNMENT.match(words[0]):
            words.pop(0)
        joined = " ".join(" ".join(word.split()) for word in words)
        if not any(command.match(joined) for command in self.commands):
            return False
        return self.word is None or any(self.word.search(word) for word in words[1:])


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _compile_argv_rule(rule: Mapping[str, Any], pack: Mapping[str, Any]) -> CompiledRule:
    word = rule.get("word")
    if "mentions" in rule:
        compile_regex(rule["mentions"], "mentions")
    return ArgvRule(
        tuple(command_pattern_regex(item) for item in rule["command"]),
        compile_regex(word, "word") if word else None,
    )


MATCHERS: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], CompiledRule]] = {
    "argv": _compile_argv_rule,
    "command": _compile_command_rule,
    "regex": _compile_regex_rule,
    "secret": _compile_secret_rule,
}


def compile_rule(rule: Mapping[str, Any], pack: Mapping[str, Any]) -> CompiledRule:
    kind = rule.get("kind")
    compiler = MATCHERS.get(kind)
    if compiler is None:
        known = ", ".join(sorted(MATCHERS))
        raise RuleCompileError("kind", f"unknown rule kind {kind!r}", f"use one of: {known}")
    return compiler(rule, pack)
