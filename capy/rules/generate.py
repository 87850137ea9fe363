"""Generated schema content: the matcher-kind enum follows the engine's MATCHERS registry."""

from __future__ import annotations

import json
from pathlib import Path

from capy.rules.matchers import MATCHERS
from capy.rules.resources import shipped_schemas

COMMON_SCHEMA = "common.v1.schema.json"


def common_schema_path() -> Path:
    return Path(str(shipped_schemas() / COMMON_SCHEMA))


def common_schema_text() -> str:
    schema = json.loads(common_schema_path().read_text(encoding="utf-8"))
    schema["$defs"]["matcher_kind"]["enum"] = sorted(MATCHERS)
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
