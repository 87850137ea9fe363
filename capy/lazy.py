"""Lazy package exports: a name is imported from its module on first use.

Hooks start a fresh process on every tool call, so a package's `__init__` must not import
pydantic, httpx or the store just because one of its light names was asked for.
"""

from __future__ import annotations

# No typing or collections here: a hook's lean path imports packages that use this.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def lazy_exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` that finds each exported name in `homes[name]` (a module path)."""

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import sys
        from importlib import import_module

        value = getattr(import_module(homes[name]), name)
        # Kept on the package, so the next lookup is a plain attribute read: capy imports these
        # names inside functions, a dozen times in one tool call, and each miss went through
        # the import system again.
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
