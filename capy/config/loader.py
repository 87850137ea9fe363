"""`load_settings`: merge the five layers, validate each, and record where every value came from."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr, ValidationError
from pydantic_settings import SettingsError

from capy.config import paths
from capy.config.errors import ConfigError, validation_lines
from capy.config.project_limits import restrict_project_layers
from capy.config.settings import LOAD_CONTEXT, SECRET_FIELDS, LoadContext, Settings
from capy.config.sources import (
    DEFAULT_LABEL,
    Layer,
    build_layers,
    considered_files,
    env_decode_error,
    refuse_project_secrets,
)
from capy.trust.ignored import IgnoredItem, warn_ignored

MASK = "**********"


@dataclass(frozen=True)
class Entry:
    """One resolved value as shown to a person: secrets masked, paths as text."""

    key: str
    value: Any
    source: str


@dataclass(frozen=True)
class ResolvedSettings:
    settings: Settings
    provenance: dict[str, str]
    project_root: Path
    files: tuple[Path, ...]
    # Project config keys left out because they would loosen security (see project_limits).
    ignored: tuple[IgnoredItem, ...] = ()

    def entries(self) -> list[Entry]:
        return [
            Entry(".".join(key), _shown(value), self.provenance[".".join(key)])
            for key, value in _leaves(self.settings)
        ]


def load_settings(
    project_dir: Path | None = None, environ: Mapping[str, str] | None = None
) -> ResolvedSettings:
    """Resolve defaults < user config.toml < .capy/config.toml < .capy.toml < `CAPY_*` env.

    A project file may only tighten the keys marked `tighten_only` in the settings; what it would
    loosen is left out, listed in `ignored` and warned about once, unless the project is trusted.

    Raises `ConfigError` naming the file (or variable) and key of every problem found.

    The last answer is kept for the process while its inputs read the same (see `_inputs`):
    one command asks from the store, the rule loader and the redactor, and each load validates
    every layer again.
    """
    environ = dict(os.environ if environ is None else environ)
    root = paths.project_root(project_dir if project_dir is not None else Path.cwd())
    inputs = _inputs(root, environ)
    if _last and _last[0] == inputs:
        warn_ignored(_last[1].ignored)
        return _last[1]
    resolved = _resolve(root, environ)
    _last[:] = [inputs, resolved]
    return resolved


# [inputs, ResolvedSettings] of the last load in this process.
_last: list[Any] = []


def _inputs(root: Path, environ: dict[str, str]) -> tuple[Any, ...]:
    """Everything a load reads: the root, the environment, the bytes of every config file and
    the trust store, and the project's fingerprint (trust holds only while it matches)."""
    from capy.trust.store import fingerprint

    files = [*considered_files(root, environ), paths.trusted_projects_file(environ)]
    return (
        str(root),
        tuple(sorted(environ.items())),
        tuple(map(_bytes_or_none, files)),
        fingerprint(root),
    )


def _bytes_or_none(path: Path) -> bytes | str | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:  # unreadable: the load says so, and a later fix is a new input
        return f"<{error.errno}>"


def _resolve(root: Path, environ: dict[str, str]) -> ResolvedSettings:
    home = paths.home_dir(environ)
    try:
        layers = build_layers(Settings, root, environ)
    except SettingsError as error:
        raise env_decode_error(error, environ) from None

    problems = refuse_project_secrets(layers, SECRET_FIELDS)
    # Each layer is validated alone first, so every error names the file that holds it, even
    # when a higher layer overrides the bad value.
    for layer in layers:
        problems += _construct_or_error([layer], root, home)
    if problems:
        raise ConfigError("\n".join(problems))
    layers, ignored = restrict_project_layers(
        layers, lambda chosen: _construct(chosen, root, home), root, environ
    )
    warn_ignored(ignored)
    settings = _construct_or_raise(layers, root, home)
    return ResolvedSettings(
        settings=settings,
        provenance=_provenance(layers),
        project_root=root,
        files=considered_files(root, environ),
        ignored=ignored,
    )


def _construct(layers: list[Layer], root: Path, home: Path) -> Settings:
    # pydantic-settings asks `settings_customise_sources` for its sources; this load's layers
    # reach it through a context variable, highest precedence first as it expects.
    sources = tuple(layer.source for layer in reversed(layers))
    token = LOAD_CONTEXT.set(LoadContext(root=root, home=home, sources=sources))
    try:
        return Settings()
    finally:
        LOAD_CONTEXT.reset(token)


def _construct_or_error(layers: list[Layer], root: Path, home: Path) -> list[str]:
    try:
        _construct(layers, root, home)
    except ValidationError as error:
        return validation_lines(error, Settings, _labeller(layers), SECRET_FIELDS)
    return []


def _construct_or_raise(layers: list[Layer], root: Path, home: Path) -> Settings:
    try:
        return _construct(layers, root, home)
    except ValidationError as error:
        lines = validation_lines(error, Settings, _labeller(layers), SECRET_FIELDS)
        raise ConfigError("\n".join(lines)) from None


def _labeller(layers: list[Layer]) -> Any:
    def label_for(loc: tuple[Any, ...]) -> str:
        key = tuple(str(part) for part in loc if not isinstance(part, int))
        for length in range(len(key), 0, -1):
            for layer in reversed(layers):
                if layer.supplies(key[:length]):
                    return layer.label(key[:length])
        return layers[-1].label(key)

    return label_for


def _provenance(layers: list[Layer]) -> dict[str, str]:
    provenance = {}
    for key in _field_keys(Settings):
        winner = next((layer for layer in reversed(layers) if layer.supplies(key)), None)
        provenance[".".join(key)] = winner.label(key) if winner else DEFAULT_LABEL
    return provenance


def _field_keys(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from _field_keys(annotation, (*prefix, name))
        else:
            yield (*prefix, name)


def _leaves(
    model: BaseModel, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Any]]:
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            yield from _leaves(value, (*prefix, name))
        else:
            yield (*prefix, name), value


def _shown(value: Any) -> Any:
    """A JSON-ready rendering that never reveals a secret."""
    if isinstance(value, SecretStr):
        return MASK
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return [_shown(item) for item in value]
    return value
