"""Pack views without pydantic, for a fresh process that reads an already validated rule set.

Importing pydantic and building the view classes costs several bare Python starts, which a
`capy search` from a warm cache cannot afford. The view classes are written against a small
surface of pydantic (`BaseModel`, `ConfigDict`, `Field`, `field_validator`, `model_validator`,
`model_validate`); this module offers the same surface for what a view needs: fields built from
their annotations (nested views, tuples, frozensets, dicts, optionals, enums, literals, floats
from ints), defaults and default factories, aliases, and the views' own validators, run in the
same order. It never sees unchecked data: every pack was checked by its JSON Schema and built
into pydantic views by the process that wrote the cache, and a test holds both kinds of view
equal field by field for every shipped pack.

A process chooses once, before any view module is imported (`enable`); `capy.rules.views.base`
then derives every view from `BaseModel` here instead of pydantic's.
"""

from __future__ import annotations

import sys
import types
import typing
from enum import Enum
from typing import Any, ClassVar

_enabled: list[bool] = []
_MISSING = object()


def enable() -> bool:
    """Use these models for every view imported from now on; False when it is too late (a
    view module was already imported with pydantic's)."""
    if "capy.rules.views.base" in sys.modules and not _enabled:
        return False
    _enabled[:] = [True]
    return True


def enabled() -> bool:
    return bool(_enabled)


def ConfigDict(**settings: Any) -> dict[str, Any]:
    return settings


class _FieldInfo:
    def __init__(self, default: Any, default_factory: Any, alias: str | None) -> None:
        self.default, self.default_factory, self.alias = default, default_factory, alias

    def value(self) -> Any:
        return self.default_factory() if self.default_factory is not None else self.default


def Field(
    default: Any = _MISSING,
    *,
    default_factory: Any = None,
    alias: str | None = None,
    **_constraints: Any,  # bounds the schema and the writing process already checked
) -> Any:
    return _FieldInfo(default, default_factory, alias)


def field_validator(*names: str, mode: str = "after") -> Any:
    _only_after(mode)

    def mark(function: Any) -> Any:
        target = function.__func__ if isinstance(function, classmethod) else function
        target.__plain_field_validator__ = (names, mode)
        return function

    return mark


def model_validator(*, mode: str = "after") -> Any:
    _only_after(mode)

    def mark(function: Any) -> Any:
        function.__plain_model_validator__ = mode
        return function

    return mark


def _only_after(mode: str) -> None:
    if mode != "after":  # the views validate built values only; say so if one ever doesn't
        raise NotImplementedError(f"plain views run validators after building, not {mode!r}")


class _Field:
    __slots__ = ("alias", "default", "kind", "name")

    def __init__(self, name: str, kind: Any, default: Any, alias: str | None) -> None:
        self.name, self.kind, self.default, self.alias = name, kind, default, alias


class BaseModel:
    """Frozen, attribute-only records built from a mapping by their annotations."""

    model_config: ClassVar[dict[str, Any]] = {}
    __plain_fields__: ClassVar[tuple[_Field, ...] | None] = None

    def __init__(self, **data: Any) -> None:
        self._fill(data)

    @classmethod
    def model_validate(cls, data: Any) -> Any:
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            raise TypeError(f"{cls.__name__} needs a mapping, not {type(data).__name__}")
        instance = object.__new__(cls)
        instance._fill(data)
        return instance

    def _fill(self, data: dict[str, Any]) -> None:
        cls, values = type(self), self.__dict__
        for spec in cls._plain_fields():
            raw = data.get(spec.alias, _MISSING) if spec.alias else _MISSING
            if raw is _MISSING:
                raw = data.get(spec.name, _MISSING)
            if raw is _MISSING:
                if spec.default is _MISSING:
                    raise ValueError(f"{cls.__name__}.{spec.name} is required")
                value = spec.default
                if isinstance(value, _FieldInfo):
                    value = value.value()
            else:
                value = _convert(spec.kind, raw)
            values[spec.name] = value
        for name, function in _field_validators(cls):
            values[name] = function(cls, values[name])
        for function in _model_validators(cls):
            function(self)

    @classmethod
    def _plain_fields(cls) -> tuple[_Field, ...]:
        fields = cls.__dict__.get("__plain_fields__")
        if fields is None:
            fields = _fields_of(cls)
            cls.__plain_fields__ = fields
        return fields

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"{type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise TypeError(f"{type(self).__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        names = [spec.name for spec in self._plain_fields()]
        return all(getattr(self, n) == getattr(other, n) for n in names)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, spec.name) for spec in self._plain_fields()))

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{spec.name}={getattr(self, spec.name)!r}" for spec in self._plain_fields()
        )
        return f"{type(self).__name__}({shown})"


def _fields_of(cls: type) -> tuple[_Field, ...]:
    hints = typing.get_type_hints(cls, include_extras=False)
    fields = []
    for name, kind in hints.items():
        if typing.get_origin(kind) is ClassVar or name.startswith("_") or name == "model_config":
            continue
        default = _MISSING
        for owner in cls.__mro__:
            if name in owner.__dict__:
                default = owner.__dict__[name]
                break
        alias = default.alias if isinstance(default, _FieldInfo) else None
        if isinstance(default, _FieldInfo) and default.default is _MISSING:
            default = default if default.default_factory is not None else _MISSING
        fields.append(_Field(name, kind, default, alias))
    return tuple(fields)


def _field_validators(cls: type) -> list[tuple[str, Any]]:
    found = []
    for owner in reversed(cls.__mro__):
        for attribute in owner.__dict__.values():
            function = attribute.__func__ if isinstance(attribute, classmethod) else attribute
            marked = getattr(function, "__plain_field_validator__", None)
            if marked:
                found.extend((name, function) for name in marked[0])
    return found


def _model_validators(cls: type) -> list[Any]:
    return [
        attribute
        for owner in reversed(cls.__mro__)
        for attribute in owner.__dict__.values()
        if getattr(attribute, "__plain_model_validator__", None)
    ]


def _convert(kind: Any, value: Any) -> Any:
    """`value` as pydantic's lax mode would give it for annotation `kind`."""
    origin = typing.get_origin(kind)
    if origin is None:
        if isinstance(kind, type):
            if issubclass(kind, BaseModel):
                return kind.model_validate(value)
            if issubclass(kind, Enum):
                return kind(value)
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                return float(value)
        return value
    arguments = typing.get_args(kind)
    if origin is typing.Union or origin is types.UnionType:
        if value is None and type(None) in arguments:
            return None
        members = [member for member in arguments if member is not type(None)]
        return _convert(members[0], value) if len(members) == 1 else value
    if origin is typing.Literal:
        return value
    if origin is tuple:
        if len(arguments) == 2 and arguments[1] is Ellipsis:
            return tuple(_convert(arguments[0], item) for item in value)
        return tuple(_convert(member, item) for member, item in zip(arguments, value, strict=True))
    if origin in (frozenset, set, list):
        return origin(_convert(arguments[0], item) for item in value)
    if origin is dict:
        key_kind, value_kind = arguments
        return {_convert(key_kind, k): _convert(value_kind, v) for k, v in value.items()}
    return value
