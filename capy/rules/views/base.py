"""The base every pack view derives from."""

from __future__ import annotations

from capy.rules.views import plain

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs a warm search more than the views it reads
    from typing import TypeVar

# A process that reads a validated rule set from a warm cache uses plain models (see there);
# every other process gets pydantic's. View modules take these names from here.
if plain.enabled():
    from capy.rules.views.plain import (
        BaseModel,
        ConfigDict,
        Field,
        field_validator,
        model_validator,
    )
else:
    from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# Rule statuses the engine applies; a deprecated or disabled rule is as good as absent.
LIVE_STATUSES = ("active", "experimental")


class PackView(BaseModel):
    """Frozen: packs are loaded once per process and shared, so nobody may mutate them."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    pack: str
    version: str
    description: str


class RuleView(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    status: str
    since: str
    description: str | None = None

    @property
    def active(self) -> bool:
        return self.status in LIVE_STATUSES


class Section(BaseModel):
    """A frozen part of a pack view; unknown keys were already refused by the schema."""

    model_config = ConfigDict(frozen=True, extra="ignore")


__all__ = [
    "LIVE_STATUSES",
    "BaseModel",
    "ConfigDict",
    "Field",
    "PackView",
    "RuleView",
    "Section",
    "active",
    "field_validator",
    "model_validator",
    "with_fields",
]

if TYPE_CHECKING:
    R = TypeVar("R", bound=RuleView)


def active(rules: tuple[R, ...]) -> tuple[R, ...]:
    """Rules in force: the engine already drops disabled ones; deprecated ones stop here."""
    return tuple(rule for rule in rules if rule.active)


if TYPE_CHECKING:
    V = TypeVar("V")


def with_fields(view: V, **changes: object) -> V:
    """A copy of a view with some fields replaced, built anew through the class's own
    validation (pydantic's or the plain models' of a warm process): a copy would carry values
    cached from the old fields (`functools.cached_property`)."""
    cls = type(view)
    declared = getattr(cls, "model_fields", None)
    names = list(declared) if declared is not None else [f.name for f in cls._plain_fields()]
    return cls.model_validate({name: getattr(view, name) for name in names} | changes)
