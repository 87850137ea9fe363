"""Semantic checks the schema cannot express, and the runner for every rule's examples."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from capy.rules.diagnostics import Diagnostic
from capy.rules.matchers import RuleCompileError, compile_rule
from capy.rules.overlays import MergedPack, iter_rules
from capy.rules.project_limits import limit_diagnostics


def _node(data: Any, path: tuple) -> Any:
    for part in path:
        data = data[part]
    return data


def lint_packs(packs: Iterable[MergedPack]) -> list[Diagnostic]:
    packs = list(packs)
    found: list[Diagnostic] = []
    found.extend(_duplicate_ids(packs))
    known_ids = {rule_id for pack in packs for rule_id, _ in iter_rules(pack.data)}
    for pack in packs:
        found.extend(_namespaces(pack))
        found.extend(_references(pack, known_ids))
        found.extend(_compiles(pack))
    found.extend(limit_diagnostics({pack.name: pack for pack in packs}))
    return found


def _duplicate_ids(packs: list[MergedPack]) -> Iterable[Diagnostic]:
    first_seen: dict[str, str] = {}
    for pack in packs:
        for rule_id, path in iter_rules(pack.data):
            file, position = pack.locate((*path, "id"))
            where = f"{file}:{position.line}"
            if rule_id in first_seen:
                yield pack.at(
                    (*path, "id"),
                    "duplicate-id",
                    f"rule id {rule_id!r} is already defined at {first_seen[rule_id]}",
                    "rule ids are unique across all packs and never reused; pick a new one",
                    rule_id=rule_id,
                )
            else:
                first_seen[rule_id] = where


def _namespaces(pack: MergedPack) -> Iterable[Diagnostic]:
    for rule_id, path in iter_rules(pack.data):
        origin = pack.origin_file((*path, "id"))
        allowed = {pack.name} | ({origin.name} if origin.is_overlay else set())
        namespace = rule_id.split(".", 1)[0]
        if namespace not in allowed:
            names = " or ".join(f"`{name}.`" for name in sorted(allowed))
            yield pack.at(
                (*path, "id"),
                "id-namespace",
                f"rule id {rule_id!r} is not namespaced by its pack",
                f"start it with {names}",
                rule_id=rule_id,
            )


def _is_reference_key(key: str) -> bool:
    return key in ("ref", "refs") or key.endswith(("_ref", "_refs"))


def _references(pack: MergedPack, known_ids: set[str]) -> Iterable[Diagnostic]:
    """Keys named `ref`, `refs`, `*_ref` or `*_refs` hold rule ids, which must exist."""
    stack: list[tuple[tuple, Any]] = [((), pack.data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if _is_reference_key(key):
                    targets = value if isinstance(value, list) else [value]
                    for index, target in enumerate(targets):
                        if isinstance(target, str) and target not in known_ids:
                            where = (*path, key, index) if isinstance(value, list) else (*path, key)
                            close = difflib.get_close_matches(target, sorted(known_ids), n=1)
                            yield pack.at(
                                where,
                                "unknown-reference",
                                f"{key} names unknown rule id {target!r}",
                                f"did you mean {close[0]!r}?" if close else None,
                            )
                else:
                    stack.append(((*path, key), value))
        elif isinstance(node, list):
            stack.extend(((*path, index), value) for index, value in enumerate(node))


def detecting_rules(
    pack: MergedPack, include_disabled: bool = False
) -> Iterable[tuple[str, tuple, dict]]:
    for rule_id, path in iter_rules(pack.data):
        rule = _node(pack.data, path)
        if "kind" not in rule:
            continue
        if rule.get("status") == "disabled" and not include_disabled:
            continue
        yield rule_id, path, rule


def _compiles(pack: MergedPack) -> Iterable[Diagnostic]:
    for rule_id, path, rule in detecting_rules(pack, include_disabled=True):
        try:
            compile_rule(rule, pack.data)
        except RuleCompileError as exc:
            yield pack.at(
                (*path, exc.field),
                "bad-regex" if "compile" in exc.message else "bad-rule",
                exc.message,
                exc.hint,
                rule_id=rule_id,
            )
            continue
        except (KeyError, TypeError):
            continue  # shape problems are the schema's to report
        pattern = rule.get("pattern")
        if isinstance(pattern, str) and rule.get("kind") != "command":
            yield from _backtracking(pack, path, rule_id, pattern)
        if isinstance(pattern, str) and rule.get("kind") != "command" and _matches_empty(pattern):
            yield pack.at(
                (*path, "pattern"),
                "matches-everything",
                "pattern matches the empty string, so it fires on every text",
                "require at least one character, e.g. replace `*` with `+`",
                rule_id=rule_id,
            )


def _backtracking(pack: MergedPack, path: tuple, rule_id: str, pattern: str):
    from capy.rules.backtracking import risky_shape

    shape = risky_shape(pattern)
    if shape:
        yield pack.at(
            (*path, "pattern"),
            "catastrophic-regex",
            f"pattern can backtrack catastrophically: {shape}",
            "make the repeated parts unable to match the same characters (e.g. `(a+)+` -> "
            "`a+`), or use a possessive quantifier or atomic group: `(?>...)`, `a++`",
            rule_id=rule_id,
        )


def _matches_empty(pattern: str) -> bool:
    try:
        return re.fullmatch(pattern, "") is not None
    except re.error:
        return False


@dataclass(frozen=True)
class ExampleReport:
    rules: int
    examples: int
    failures: list[Diagnostic]


@dataclass(frozen=True)
class ExampleProblem:
    """An example a pack's own interpreter disagrees with, found by its view's check."""

    rule_id: str
    where: tuple  # the example's path inside its rule, e.g. ("examples", "unwrap", 0)
    message: str
    hint: str


def trial_patterns(packs: Iterable[MergedPack]) -> tuple[list[Diagnostic], set[str]]:
    """Time the patterns that overlays and given files bring (the shipped ones are tested in
    CI) on adversarial inputs; the errors, and the ids of rules whose examples must not run."""
    from capy.rules.backtracking import risky_shape
    from capy.rules.regextrial import TRIAL_INPUT_CHARS, TRIAL_SECONDS, slow_patterns

    candidates = []
    for pack in packs:
        for rule_id, path, rule in detecting_rules(pack):
            pattern = rule.get("pattern")
            if not isinstance(pattern, str) or rule.get("kind") == "command":
                continue
            if pack.origin_file((*path, "pattern")).origin == "shipped":
                continue
            candidates.append((pack, path, rule_id, pattern))
    unsafe = {rule_id for _, _, rule_id, pattern in candidates if risky_shape(pattern)}
    timed = [item for item in candidates if item[2] not in unsafe]
    slow = slow_patterns([pattern for *_, pattern in timed])
    found = [
        pack.at(
            (*path, "pattern"),
            "catastrophic-regex",
            f"pattern ran for more than {TRIAL_SECONDS:g} s on a "
            f"{TRIAL_INPUT_CHARS:,}-character adversarial text, so it can stall redaction",
            "simplify the repeated parts so that they cannot match the same characters, or "
            "make them possessive (`a++`) or atomic (`(?>...)`)",
            rule_id=rule_id,
        )
        for index, (pack, path, rule_id, _) in enumerate(timed)
        if index in slow
    ]
    return found, unsafe | {timed[index][2] for index in slow}


def run_examples(packs: Iterable[MergedPack], skip: set[str] = frozenset()) -> ExampleReport:
    """Run every `examples.match` / `examples.no_match` of every active detecting rule, and
    the examples of rules that are not matchers (a view's `check_examples`); rules in `skip`
    (patterns that failed their timed trial) are left out, so validate itself cannot stall."""
    failures: list[Diagnostic] = []
    rules = examples = 0
    packs = list(packs)
    for pack in packs:
        checked, count, problems = _view_examples(pack)
        rules, examples = rules + checked, examples + count
        failures.extend(problems)
    for pack in packs:
        for rule_id, path, rule in detecting_rules(pack):
            if rule_id in skip:
                continue
            try:
                compiled = compile_rule(rule, pack.data)
            except (RuleCompileError, KeyError, TypeError):
                continue  # reported by lint
            rules += 1
            try:
                found, count = _rule_examples(pack, path, rule_id, rule, compiled)
            except (AttributeError, KeyError, TypeError, ValueError):
                continue  # examples or fields of the wrong shape: the schema reports them
            failures.extend(found)
            examples += count
    return ExampleReport(rules, examples, failures)


def _rule_examples(
    pack: MergedPack, path: tuple, rule_id: str, rule: dict, compiled: Any
) -> tuple[list[Diagnostic], int]:
    """One detecting rule's examples run against it: the failures and how many ran."""
    found: list[Diagnostic] = []
    cases = rule.get("examples") or {}
    should = list(enumerate(cases.get("match") or []))
    should_not = list(enumerate(cases.get("no_match") or []))
    if not should:
        found.append(
            pack.at(
                path,
                "missing-examples",
                "detecting rule has no `examples.match`",
                "add texts it must match and texts it must not",
                rule_id=rule_id,
            )
        )
    missed = [i for i, text in should if not compiled.matches(text)]
    if should and len(missed) == len(should):
        found.append(
            pack.at(
                (*path, "examples", "match"),
                "matches-nothing",
                "rule matches none of its own match examples, so it can "
                "match nothing it was written for",
                "fix the pattern, keywords or allowlist",
                rule_id=rule_id,
            )
        )
    else:
        for index in missed:
            found.append(
                _example_failure(
                    pack,
                    path,
                    rule_id,
                    "match",
                    index,
                    cases["match"][index],
                    "does not match",
                )
            )
    for index, text in should_not:
        if compiled.matches(text):
            found.append(_example_failure(pack, path, rule_id, "no_match", index, text, "matches"))
    return found, len(should) + len(should_not)


def _view_examples(pack: MergedPack) -> tuple[int, int, list[Diagnostic]]:
    """Rules whose examples only their interpreter can judge (command wrappers: what a
    wrapped command runs) are checked by `check_examples(view)` in the pack's view module."""
    import importlib

    from capy.rules.ruleset import active_only

    try:
        module = importlib.import_module(f"capy.rules.views.{pack.name.replace('-', '_')}")
    except ImportError:
        return 0, 0, []
    check = getattr(module, "check_examples", None)
    if check is None:
        return 0, 0, []
    try:
        view = module.VIEW.model_validate(active_only(pack.data))
    except Exception:
        return 0, 0, []
    rules, count, problems = check(view)
    paths = dict(iter_rules(pack.data))
    return (
        rules,
        count,
        [
            pack.at(
                (*paths.get(problem.rule_id, ()), *problem.where),
                "example-failed",
                problem.message,
                problem.hint,
                rule_id=problem.rule_id,
            )
            for problem in problems
        ],
    )


def _example_failure(
    pack: MergedPack, path: tuple, rule_id: str, group: str, index: int, text: str, verb: str
) -> Diagnostic:
    shown = text if len(text) <= 60 else text[:57] + "..."
    hint = (
        "widen the pattern or fix the example"
        if group == "match"
        else "tighten the pattern, add an allowlist entry, or fix the example"
    )
    return pack.at(
        (*path, "examples", group, index),
        "example-failed",
        f"{group} example {index + 1} {verb}: {shown!r}",
        hint,
        rule_id=rule_id,
    )
