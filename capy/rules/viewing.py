"""Building a pack's typed view from its merged data: what `RuleSet.view` and a warm CLI start's
cached rule set (capy.cli.warm) share, without the loader and merger they do not."""

from __future__ import annotations

import importlib
from typing import Any


def build_view(name: str, data: dict[str, Any]) -> Any:
    """The typed, frozen view of pack `name`, with disabled rules left out."""
    module = importlib.import_module(f"capy.rules.views.{name.replace('-', '_')}")
    return module.VIEW.model_validate(active_only(data))


def active_only(node: Any) -> Any:
    """Drop disabled rules everywhere, so views and interpreters never see them."""
    if isinstance(node, dict):
        return {key: active_only(value) for key, value in node.items()}
    if isinstance(node, list):
        return [
            active_only(item)
            for item in node
            if not (isinstance(item, dict) and "id" in item and item.get("status") == "disabled")
        ]
    return node
