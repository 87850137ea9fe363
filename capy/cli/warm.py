"""A warm start for a plain `capy search QUERY...` and `capy stats`: the settings and rules in
force, read from plain cached data instead of pydantic-settings and pydantic views.

What those commands need from the settings is a few values: the database file, where its key
comes from, whether replies are redacted, and what was ignored as untrusted. The slow path
(the first command, or the first after any change) resolves them the usual way, checks the
rule set in force, builds the views the commands read (so that their validators passed), and
writes the values to one small entry beside the compiled-rules cache, with every file they came
from (`capy.watched`: config files, the trust store, overlays, shipped packs and schemas,
project markers). A later process whose entry is fresh takes plain views (`capy.rules.views
.plain`) and the cached rule set, and never imports pydantic; the commands themselves run the
same functions either way, so results and redaction are the same.

Never cached: a key (a key given in a config file means no warm start at all; one from the
environment is read from it on each start), and anything from a process whose settings or
packs had errors (the full CLI says what is wrong).
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from capy import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from capy.store import Store, StoreLocation

# 1: settings values, the rules cache key and the ignored items of one project and environment.
CACHE_FORMAT = 1
KEY_ENV = "CAPY_DB_KEY"
_current: list[WarmContext] = []


@dataclass(frozen=True)
class WarmContext:
    """The settings values a warm command reads, and the rule set in force."""

    project_root: str
    db_path: str
    key_label: str
    key_file: str | None  # None: the key is in KEY_ENV
    redaction_replies: bool
    rules_key: str
    index_version: str
    ignored: tuple[dict[str, Any], ...]
    ruleset: Any  # a RuleSet, or CachedRules: what the commands read of one

    def location(self) -> StoreLocation:
        from pathlib import Path

        from capy.store.keys import KeySource
        from capy.store.location import KNOWLEDGE_KEY_NAME, StoreLocation

        if self.key_file is None:
            source = KeySource(KNOWLEDGE_KEY_NAME, self.key_label, _EnvSecret(KEY_ENV))
        else:
            source = KeySource(KNOWLEDGE_KEY_NAME, self.key_label, key_file=Path(self.key_file))
        return StoreLocation(Path(self.db_path), Path(self.project_root), source)


class _EnvSecret:
    """The part of pydantic's SecretStr a key source uses; the value stays in the environment."""

    def __init__(self, name: str) -> None:
        self._name = name

    def get_secret_value(self) -> str:
        return os.environ.get(self._name, "")

    def __repr__(self) -> str:
        return "_EnvSecret('**********')"


class CachedRules:
    """The rule set in force as the compiled-rules cache holds it: its views, each loaded
    ready-made (capy.cli.warm_views) or built from the merged packs, and the index version the
    writing process computed from them. What the warm commands read of a RuleSet, without the
    loader and merger behind one."""

    def __init__(self, rules_key: str, index_version: str) -> None:
        self.rules_key = rules_key
        self.index_version = index_version
        self._packs: dict[str, Any] | None = None
        self._views: dict[str, Any] = {}

    def view(self, name: str) -> Any:
        if name not in self._views:
            from capy.cli.warm_views import load_view, store_view

            view = load_view(self.rules_key, name)
            if view is None:
                from capy.rules.viewing import build_view

                view = build_view(name, self._pack_data(name))
                store_view(self.rules_key, name, view)
            self._views[name] = view
        return self._views[name]

    def _pack_data(self, name: str) -> Any:
        if self._packs is None:
            from capy.rules.cache import read_cache
            from capy.store.errors import StoreError

            cached = read_cache(self.rules_key)
            if cached is None:  # pruned since this process checked: rare, said in one line
                raise StoreError("capy's compiled rules went missing meanwhile; run it again")
            self._packs = cached["packs"]
        return self._packs[name]["data"]


def current() -> WarmContext | None:
    """The context of the command running warm in this process, if any."""
    return _current[-1] if _current else None


@contextmanager
def warmed() -> Iterator[WarmContext | None]:
    """Run the block with this project's warm context installed (None: there is none, and
    the block runs as the full CLI would)."""
    context = _prepare()
    if context is None:
        yield None
        return
    if context.ignored:  # said again on every start, as loading settings and rules says it
        from capy.trust.ignored import IgnoredItem, warn_ignored

        items = context.ignored
        warn_ignored([IgnoredItem(**{**i, "reasons": tuple(i["reasons"])}) for i in items])
    _current.append(context)
    try:
        yield context
    finally:
        _current.remove(context)


def open_warm_store(context: WarmContext) -> Store:
    from capy.store import open_located, stderr_notice

    return open_located(context.location(), notify=stderr_notice)


# --- the entry ---------------------------------------------------------------------------------


def _inputs(start: str) -> list[Any]:
    from capy.watched import environment

    # Whether a key is in the environment decides where it comes from; its value stays out.
    return [
        __version__,
        CACHE_FORMAT,
        start,
        environment(),
        bool(os.environ.get(KEY_ENV, "").strip()),
    ]


def _entry_path(inputs: list[Any]) -> str:
    from capy.watched import cache_dir

    digest = zlib.crc32(json.dumps(inputs).encode())
    return os.path.join(cache_dir("cli"), f"warm-{digest:08x}.json")


def _prepare() -> WarmContext | None:
    from capy.watched import is_fresh, read_entry

    try:
        start = os.getcwd()
    except OSError:
        return None  # a working directory that is gone: the full CLI says so
    inputs = _inputs(start)
    path = _entry_path(inputs)
    entry = read_entry(path, CACHE_FORMAT)
    if entry is not None and entry.get("inputs") == inputs and is_fresh(entry.get("watch", [])):
        from capy.rules.views import plain

        if plain.enable():
            context = _from_entry(entry)
            if context is not None:
                return context
    return _rebuild(start, inputs, path)


def _from_entry(entry: dict[str, Any]) -> WarmContext | None:
    from capy.rules.cache import cache_path

    try:
        values = entry["values"]
        if not cache_path(values["rules_key"]).is_file():  # the compiled rules were pruned
            return None
        ruleset = CachedRules(values["rules_key"], values["index_version"])
        return WarmContext(**{**values, "ignored": tuple(values["ignored"]), "ruleset": ruleset})
    except (KeyError, TypeError):  # an entry that is not what this capy writes: rebuild
        return None


def _rebuild(start: str, inputs: list[Any], path: str) -> WarmContext | None:
    """The context the slow way, written down for the next process when it can be."""
    from pathlib import Path

    from capy.config import ConfigError, load_settings
    from capy.config.paths import project_root
    from capy.rules import RulesError, load_rules
    from capy.rules.cache import cache_key
    from capy.rules.ruleset import overlay_candidates
    from capy.store import locate_store
    from capy.watched import (
        config_inputs,
        marker_inputs,
        overlay_inputs,
        shipped_inputs,
        watch_list,
        write_entry,
    )

    root = project_root(Path(start))
    # Listed before loading, so that whatever fails, fixing the file invalidates the entry.
    watched = [*marker_inputs(Path(start), root), *shipped_inputs(), *config_inputs(root)]
    try:
        watched += overlay_inputs(root)
        resolved = load_settings(root)
        ruleset = load_rules(root)
        for name in ("search", "secrets", "retention"):  # their validators pass
            ruleset.view(name)
        location = locate_store(root)
        rules_key = cache_key(overlay_candidates(root))
    except (ConfigError, RulesError):
        return None  # the full CLI says what is wrong
    source = location.key_source
    if source.key_file is None and not resolved.provenance.get("db_key", "").startswith(KEY_ENV):
        return None  # a key from a config file: never written anywhere else
    ignored = [item.as_json() for item in [*resolved.ignored, *ruleset.ignored]]
    values = {
        "project_root": str(location.project_root),
        "db_path": str(location.path),
        "key_label": source.label,
        "key_file": None if source.key_file is None else str(source.key_file),
        "redaction_replies": bool(resolved.settings.redaction.replies),
        "rules_key": rules_key,
        "index_version": ruleset.index_version,
        "ignored": ignored,
    }
    entry = {
        "format": CACHE_FORMAT,
        "inputs": inputs,
        "watch": watch_list(watched),
        "values": values,
    }
    write_entry(path, entry)
    return WarmContext(**{**values, "ignored": tuple(values["ignored"]), "ruleset": ruleset})
