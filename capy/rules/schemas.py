"""JSON Schema validation of packs, with errors mapped back to YAML positions."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, relevance
from referencing import Registry, Resource

from capy.rules.diagnostics import Diagnostic
from capy.rules.positions import Position
from capy.rules.resources import shipped_schema_files


@cache
def schema_registry() -> tuple[Registry, dict[str, dict]]:
    """All shipped schemas, keyed by their short name (`secrets.v1`) and registered by `$id`."""
    by_name: dict[str, dict] = {}
    resources = []
    for entry in shipped_schema_files():
        schema = json.loads(entry.read_text(encoding="utf-8"))
        by_name[entry.name.removesuffix(".schema.json")] = schema
        resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources), by_name


def schema_names() -> list[str]:
    return sorted(schema_registry()[1])


@cache
def validator_for(schema_name: str) -> Draft202012Validator | None:
    registry, by_name = schema_registry()
    schema = by_name.get(schema_name)
    if schema is None:
        return None
    return Draft202012Validator(
        schema, registry=registry, format_checker=Draft202012Validator.FORMAT_CHECKER
    )


@dataclass(frozen=True)
class SchemaProblem:
    """A schema failure before it is given a file position."""

    code: str
    message: str
    hint: str | None
    path: tuple
    key: bool
    rule_id: str | None


Locator = Callable[[tuple, bool], tuple[str, Position]]


def schema_problems(data: Any, schema_name: str) -> list[SchemaProblem]:
    """Every schema error for one document, most relevant first."""
    validator = validator_for(schema_name)
    if validator is None:
        return []
    errors = sorted(validator.iter_errors(data), key=relevance)
    problems = [_explain_error(data, error, validator) for error in errors]
    problems = [problem for problem in problems if problem.code != "cascade"] or problems
    # A misspelt key shows up twice: as unknown, and as the required key it was meant to be.
    # The unknown key, with its "did you mean", is the one that tells the user what to fix.
    return sorted(problems, key=lambda problem: problem.code != "unknown-key")


def schema_diagnostics(data: Any, schema_name: str, locate: Locator) -> list[Diagnostic]:
    found = []
    for problem in schema_problems(data, schema_name):
        file, position = locate(problem.path, problem.key)
        pointer = "/" + "/".join(str(part) for part in problem.path)
        found.append(
            Diagnostic(
                file=file,
                line=position.line,
                column=position.column,
                code=problem.code,
                message=problem.message,
                hint=problem.hint,
                rule_id=problem.rule_id,
                pointer=pointer if problem.path else "",
            )
        )
    return found


def _explain_error(
    data: Any, error: ValidationError, validator: Draft202012Validator
) -> SchemaProblem:
    error = _deepest(error)
    path = tuple(error.absolute_path)
    code, message, hint, key_path = _explain(error, validator)
    return SchemaProblem(
        code=code,
        message=message,
        hint=hint,
        path=key_path if key_path is not None else path,
        key=key_path is not None,
        rule_id=_rule_id_at(data, path),
    )


def _deepest(error: ValidationError) -> ValidationError:
    """allOf/anyOf failures hide the useful error in their context; surface the best leaf."""
    while error.context:
        error = sorted(error.context, key=relevance)[0]
    return error


def _explain(
    error: ValidationError, validator: Draft202012Validator
) -> tuple[str, str, str | None, tuple | None]:
    where = _dotted(error.absolute_path)
    keyword = error.validator
    if keyword in ("unevaluatedProperties", "additionalProperties"):
        unknown = _unexpected_keys(error)
        allowed = _allowed_keys(error, validator)
        if unknown and all(key in allowed for key in unknown):
            # Declared keys reported as "unevaluated" only because a composed subschema failed
            # elsewhere: a cascade, not the user's mistake. The real error is reported too.
            return ("cascade", error.message, None, None)
        key = unknown[0] if unknown else "?"
        hint = _close_match_hint(key, allowed)
        return (
            "unknown-key",
            f"unknown key {key!r}" + (f" in {where}" if where else " at the top level"),
            hint,
            (*error.absolute_path, key),
        )
    if keyword == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return (
            "missing-key",
            f"missing required key {missing!r}" + (f" in {where}" if where else ""),
            f"add `{missing}:`; see the schema's description of it",
            None,
        )
    if keyword == "type":
        expected = error.validator_value
        expected_text = " or ".join(expected) if isinstance(expected, list) else expected
        actual = _json_type(error.instance)
        hint = None
        if expected_text == "string" and actual in ("number", "integer", "boolean", "null"):
            hint = f'quote the value to keep it text: "{_yaml_scalar(error.instance)}"'
        return (
            "wrong-type",
            f"{where or 'document'} must be {_article(expected_text)} {expected_text}, "
            f"not {_article(actual)} {actual}",
            hint,
            None,
        )
    if keyword in ("enum", "const"):
        allowed = error.validator_value if keyword == "enum" else [error.validator_value]
        choices = ", ".join(json.dumps(item) for item in allowed)
        hint = _close_match_hint(str(error.instance), [str(item) for item in allowed])
        return (
            "bad-value",
            f"{where or 'value'} is {json.dumps(error.instance)}; expected one of: {choices}",
            hint,
            None,
        )
    if keyword == "pattern":
        return (
            "bad-value",
            f"{where or 'value'} {json.dumps(error.instance)} does not match the required form "
            f"{error.validator_value}",
            _pattern_hint(error.absolute_path),
            None,
        )
    if keyword == "format" and error.validator_value == "regex":
        return (
            "bad-regex",
            f"{where} does not compile: {_regex_problem(error.instance)}",
            "Python `re` syntax; escape literal brackets, parentheses and backslashes",
            None,
        )
    return ("schema", f"{where or 'document'}: {error.message}", None, None)


def _regex_problem(value: Any) -> str:
    try:
        re.compile(value)
    except (re.error, TypeError) as exc:
        position = getattr(exc, "pos", None)
        where = f" at position {position}" if position is not None else ""
        return f"{getattr(exc, 'msg', exc)}{where}"
    return "not a regular expression"


def _pattern_hint(path: Any) -> str | None:
    last = list(path)[-1] if list(path) else None
    if last == "id":
        return "rule ids are kebab-case and namespaced by pack, like `secrets.github-classic-pat`"
    if last in ("version", "since"):
        return 'use a quoted semantic version like "1.2.0"'
    return None


def _unexpected_keys(error: ValidationError) -> list[str]:
    instance = error.instance if isinstance(error.instance, dict) else {}
    text = error.message
    return [key for key in instance if repr(key) in text]


def _allowed_keys(error: ValidationError, validator: Draft202012Validator) -> list[str]:
    keys: set[str] = set()
    _collect_properties(error.schema, validator, keys, depth=0)
    return sorted(keys)


def _collect_properties(
    schema: Any, validator: Draft202012Validator, keys: set, depth: int
) -> None:
    if not isinstance(schema, dict) or depth > 6:
        return
    keys.update(schema.get("properties", {}))
    for sub in schema.get("allOf", []) + schema.get("anyOf", []) + schema.get("oneOf", []):
        _collect_properties(sub, validator, keys, depth + 1)
    if "$ref" in schema:
        try:
            resolved = validator._resolver.lookup(schema["$ref"]).contents
        except Exception:  # an unresolvable ref only costs us the hint
            return
        _collect_properties(resolved, validator, keys, depth + 1)


def _close_match_hint(value: str, choices: list[str]) -> str | None:
    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    if choices and len(choices) <= 12:
        return "allowed: " + ", ".join(choices)
    return None


def _rule_id_at(data: Any, path: tuple) -> str | None:
    """The id of the innermost rule enclosing a path, so messages can lead with it."""
    node, found = data, None
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(node, dict) and isinstance(node.get("id"), str):
            found = node["id"]
    return found


def _dotted(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _yaml_scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)
