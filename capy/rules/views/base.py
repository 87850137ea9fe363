"""The base every pack view derives from."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


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
        return self.status in ("active", "experimental")
