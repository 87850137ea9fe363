"""Project config files may only tighten: a security-relevant key they loosen is left out.

Which keys are security-relevant, and which way is tighter, is data on the settings model: the
`x-capy-project` annotation a field gets from `tighten_only(...)` in capy/config/settings.py.
Each project file is judged alone against what the defaults and the user's config give; a key
it would loosen is removed from that file's layer and reported, unless the user trusts the
project (`capy trust`) with its files as they are now.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_settings import InitSettingsSource

from capy.config.settings import PROJECT_DIRECTION_KEY, Settings
from capy.config.sources import Layer
from capy.trust.direction import Direction, loosenings, parse_direction
from capy.trust.ignored import IgnoredItem

Construct = Callable[[list[Layer]], Settings]


@cache
def project_directions() -> dict[tuple[str, ...], Direction]:
    """Every annotated settings key and the way a project may move it."""
    return dict(_annotated(Settings))


def _annotated(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> Iterator[tuple]:
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from _annotated(annotation, (*prefix, name))
        elif isinstance(info.json_schema_extra, dict) and PROJECT_DIRECTION_KEY in (
            extra := info.json_schema_extra
        ):
            yield (*prefix, name), parse_direction(extra[PROJECT_DIRECTION_KEY])


def restrict_project_layers(
    layers: list[Layer], construct: Construct, root: Path, environ: Mapping[str, str]
) -> tuple[list[Layer], tuple[IgnoredItem, ...]]:
    """The layers with every loosening project key removed, and what was removed and why."""
    directions = project_directions()
    touched = [
        layer
        for layer in layers
        if layer.kind == "project" and any(layer.supplies(key) for key in directions)
    ]
    if not touched:
        return layers, ()
    from capy.trust.store import is_trusted

    if is_trusted(root, environ):
        return layers, ()
    below = [layer for layer in layers if layer.kind in ("default", "user")]
    inherited = construct(below)
    ignored: list[IgnoredItem] = []
    restricted = []
    judged = {id(layer) for layer in touched}
    for layer in layers:
        if id(layer) not in judged:
            restricted.append(layer)
            continue
        candidate = construct([*below, layer])
        dropped = []
        for key, direction in directions.items():
            if not layer.supplies(key):
                continue
            name = ".".join(key)
            reasons = loosenings(
                direction, _plain(_value(inherited, key)), _plain(_value(candidate, key)), name
            )
            if reasons:
                dropped.append(key)
                ignored.append(IgnoredItem("config", str(layer.path), name, tuple(reasons)))
        restricted.append(_without(layer, dropped) if dropped else layer)
    return restricted, tuple(ignored)


def _value(settings: BaseModel, key: tuple[str, ...]) -> Any:
    node: Any = settings
    for part in key:
        node = getattr(node, part)
    return node


def _plain(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def _without(layer: Layer, keys: list[tuple[str, ...]]) -> Layer:
    data = _deep_copy(layer.data)
    for key in keys:
        node = data
        for part in key[:-1]:
            node = node[part]
        node.pop(key[-1], None)
    source = InitSettingsSource(Settings, data)
    return Layer(layer.kind, source, data, path=layer.path, environ=layer.environ)


def _deep_copy(data: dict[str, Any]) -> dict[str, Any]:
    return {
        key: _deep_copy(value) if isinstance(value, dict) else value for key, value in data.items()
    }
