"""Configuration errors: one line per problem, naming the source and the key, never a traceback."""

from __future__ import annotations

import difflib
import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")
_TOML_AT_END = re.compile(r"\s*\(at end of document\)$")


# pydantic speaks Python; a person editing TOML or an env var thinks in tables and lists.
_TOML_WORDING = {
    "model_type": "Input should be a table (a [section] or {...} of keys)",
    "model_attributes_type": "Input should be a table (a [section] or {...} of keys)",
    "dict_type": "Input should be a table (a [section] or {...} of keys)",
    "tuple_type": 'Input should be a list, like ["a", "b"]',
    "list_type": 'Input should be a list, like ["a", "b"]',
}


class ConfigError(Exception):
    """A configuration problem a person must fix; `message` is ready to print (one line each)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(self.message.splitlines())


def toml_syntax_error(path: Path, error: tomllib.TOMLDecodeError) -> ConfigError:
    """`FILE:LINE:COL: invalid TOML (reason); ...`, from tomllib's `(at line L, column C)` text."""
    text = str(error)
    position = ""
    if match := _TOML_POSITION.search(text):
        position = f":{match.group(1)}:{match.group(2)}"
        text = text[: match.start()]
    elif match := _TOML_AT_END.search(text):
        text = text[: match.start()] + " at the end of the file"
    reason = text[:1].lower() + text[1:]
    return ConfigError(
        f"{path}{position}: invalid TOML ({reason}); fix the syntax at that spot or delete the file"
    )


def unreadable_file(path: Path, error: OSError | UnicodeDecodeError) -> ConfigError:
    from capy.userfiles import UserFileError

    if isinstance(error, UnicodeDecodeError):
        why = "it is not UTF-8 text"
    elif isinstance(error, UserFileError):
        why = error.reason
    else:
        why = error.strerror or type(error).__name__
    return ConfigError(f"{path}: cannot read this config file ({why}); fix or delete it")


def dotted(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


def describe_error(error: dict[str, Any], model: type[BaseModel], *, show_input: bool) -> str:
    """One pydantic error as `key.path: message`, phrased for a person editing a file."""
    loc = tuple(error["loc"])
    key = dotted(loc)
    if error["type"] == "extra_forbidden":
        return f"{key}: {_unknown_key(loc, model)}"
    message = _TOML_WORDING.get(error["type"], error["msg"])
    if error["type"] == "value_error":
        message = message.removeprefix("Value error, ")
    elif show_input and not isinstance(error.get("input"), dict):
        shown = repr(error.get("input"))
        message += f" (got {shown[:60]}{'...' if len(shown) > 60 else ''})"
    return f"{key}: {message}"


def _unknown_key(loc: tuple[Any, ...], model: type[BaseModel]) -> str:
    for part in loc[:-1]:
        field = model.model_fields.get(str(part))
        annotation = field.annotation if field else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return "unknown key; remove it"
        model = annotation
    known = sorted(model.model_fields)
    close = difflib.get_close_matches(str(loc[-1]), known, n=1)
    if close:
        return f"unknown key; did you mean {close[0]!r}?"
    return f"unknown key; known keys here: {', '.join(known)}"


def validation_lines(
    exc: ValidationError, model: type[BaseModel], label_for: Any, secret_keys: frozenset[str]
) -> list[str]:
    """Render every error as `SOURCE: key.path: message`; `label_for(loc)` names the source."""
    lines = []
    for error in exc.errors():
        loc = tuple(error["loc"])
        show_input = not (loc and loc[0] in secret_keys)
        lines.append(f"{label_for(loc)}: {describe_error(error, model, show_input=show_input)}")
    return lines
