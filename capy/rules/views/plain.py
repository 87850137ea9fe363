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

import contextlib
import sys
import types
from enum import Enum

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is imported where annotations are evaluated (a cold build) only
    from typing import Any

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
    """One field of a view class. Its converter comes from the evaluated annotation, which is
    looked up only when a value is first converted: building defaults, comparing, hashing and
    reading views a warm process unpickled never evaluate the annotations (typing's
    `get_type_hints` compiles each one)."""

    __slots__ = ("_convert", "alias", "default", "name", "owner")

    def __init__(self, name: str, owner: type, default: Any, alias: str | None) -> None:
        self.name, self.owner, self.default, self.alias = name, owner, default, alias
        self._convert: Any = None

    def convert(self, raw: Any) -> Any:
        convert = self._convert
        if convert is None:
            annotation = self.owner.__annotations__.get(self.name)
            convert = _BUILTIN_SCALARS.get(annotation) if isinstance(annotation, str) else None
            if convert is None:
                convert = _converter(_type_hints(self.owner)[self.name])
            self._convert = convert
        return convert(raw)


class _Plan:
    """How one class is built: its fields, then its field and model validators in order."""

    __slots__ = ("field_validators", "fields", "model_validators")

    def __init__(self, cls: type) -> None:
        self.fields = _fields_of(cls)
        self.field_validators = _field_validators(cls)
        self.model_validators = _model_validators(cls)


class BaseModel:
    """Frozen, attribute-only records built from a mapping by their annotations."""

    # Not annotated: every annotation is a field, and telling a `ClassVar` one apart would
    # evaluate it with typing's names, which a warm process does not import.
    model_config = {}  # noqa: RUF012 (read only, as pydantic's)

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
        plan = cls._plain_plan()
        for spec in plan.fields:
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
                value = spec.convert(raw)
            values[spec.name] = value
        for name, function in plan.field_validators:
            values[name] = function(cls, values[name])
        for function in plan.model_validators:
            function(self)

    @classmethod
    def _plain_plan(cls) -> _Plan:
        plan = cls.__dict__.get("__plain_plan__")
        if plan is None:
            plan = _Plan(cls)
            type.__setattr__(cls, "__plain_plan__", plan)
        return plan

    @classmethod
    def _plain_fields(cls) -> tuple[_Field, ...]:
        return cls._plain_plan().fields

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
    # The names `get_type_hints` would give, in its order (bases first), unevaluated.
    annotations: dict[str, Any] = {}
    for owner in reversed(cls.__mro__):
        # Not inspect.get_annotations: a warm process never imports inspect (capy.deferred).
        annotations.update(owner.__dict__.get("__annotations__", {}))  # noqa: RUF063
    fields = []
    for name, kind in annotations.items():
        if _is_class_var(kind) or name.startswith("_") or name == "model_config":
            continue
        default = _MISSING
        for owner in cls.__mro__:
            if name in owner.__dict__:
                default = owner.__dict__[name]
                break
        alias = default.alias if isinstance(default, _FieldInfo) else None
        if isinstance(default, _FieldInfo) and default.default is _MISSING:
            default = default if default.default_factory is not None else _MISSING
        fields.append(_Field(name, cls, default, alias))
    return tuple(fields)


def _is_class_var(annotation: Any) -> bool:
    if isinstance(annotation, str):  # as written, under `from __future__ import annotations`
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    import typing

    return typing.get_origin(annotation) is typing.ClassVar


_hints: dict[type, dict[str, Any]] = {}


def _type_hints(cls: type) -> dict[str, Any]:
    hints = _hints.get(cls)
    if hints is None:
        import typing

        hints = _hints[cls] = typing.get_type_hints(cls, include_extras=False)
    return hints


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


def _same(value: Any) -> Any:
    return value


def _to_float(value: Any) -> Any:
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _optional_float(value: Any) -> Any:
    return None if value is None else _to_float(value)


# What `_converter` gives for these annotations, known from their text alone: evaluating one
# would compile it, and a process's first compile builds every syntax tree type (a tenth of a
# bare start). A test holds each equal to the converter of the evaluated annotation.
_BUILTIN_SCALARS = {
    "float": _to_float,
    "int": _same,
    "str": _same,
    "bool": _same,
    "float | None": _optional_float,
    "int | None": _same,
    "str | None": _same,
    "bool | None": _same,
    "tuple[str, ...]": tuple,
    "frozenset[str]": frozenset,
}


_converters: dict[Any, Any] = {}


def _converter(kind: Any) -> Any:
    """A function giving a value as pydantic's lax mode would for annotation `kind`."""
    try:
        return _converters[kind]
    except (KeyError, TypeError):
        pass
    convert = _build_converter(kind)
    with contextlib.suppress(TypeError):  # an unhashable annotation: built again next time
        _converters[kind] = convert
    return convert


def _build_converter(kind: Any) -> Any:
    import typing

    origin = typing.get_origin(kind)
    if origin is None:
        if isinstance(kind, type):
            if issubclass(kind, BaseModel):
                return kind.model_validate
            if issubclass(kind, Enum):
                return kind
            if kind is float:
                return _to_float
        return _same
    arguments = typing.get_args(kind)
    if origin is typing.Union or origin is types.UnionType:
        members = [member for member in arguments if member is not type(None)]
        if len(members) != 1:
            return _same  # scalars only in the views (str | bool | int): kept as given
        inner = _converter(members[0])
        return lambda value: None if value is None else inner(value)
    if origin is typing.Literal:
        return _same
    if origin is tuple:
        if len(arguments) == 2 and arguments[1] is Ellipsis:
            item = _converter(arguments[0])
            return lambda value: tuple(map(item, value))
        items = [_converter(member) for member in arguments]
        return lambda value: tuple(f(v) for f, v in zip(items, value, strict=True))
    if origin in (frozenset, set, list):
        item = _converter(arguments[0])
        return lambda value: origin(map(item, value))
    if origin is dict:
        key, item = _converter(arguments[0]), _converter(arguments[1])
        return lambda value: {key(k): item(v) for k, v in value.items()}
    return _same
