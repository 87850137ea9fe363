"""Layering user and project overlays onto shipped packs, remembering where each value came from.

Semantics: mappings merge key by key; a list of rules merges by `id` (a known id is overridden
field by field, a new id is appended); any other value replaces the base value. `disable` turns
rules off by id. Overlays may extend other overlays, up to MAX_EXTENDS_DEPTH levels.

Overlays from a project the user has not trusted are applied last and judged against the
security pack's `project_limits` (see project_limits.py): one that would loosen a
security-relevant pack is left out whole and reported.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from capy.rules.diagnostics import Diagnostic, Locatable
from capy.rules.packfile import PackFile
from capy.rules.positions import Position
from capy.rules.project_limits import (
    LIMITS_PACK,
    TRUSTED_PROJECT,
    UNTRUSTED_PROJECT,
    PackLimits,
    loosened,
    read_limits,
)
from capy.trust.ignored import IgnoredItem

# Deep chains make "where did this value come from?" unanswerable for a person; four is plenty
# for shipped pack <- team overlay <- user overlay <- project overlay.
MAX_EXTENDS_DEPTH = 4

# `answer_time_sections` is a header key so no overlay can hide a section from the fingerprints.
HEADER_KEYS = frozenset(
    {"pack", "schema", "version", "description", "requires", "shapes_index", "answer_time_sections"}
)
ORIGIN_ORDER = {"shipped": 0, "user": 1, UNTRUSTED_PROJECT: 2, TRUSTED_PROJECT: 2, "path": 3}

Origin = tuple[PackFile, tuple]


@dataclass
class MergedPack(Locatable):
    """A shipped pack with every overlay that layers onto it applied, in order."""

    name: str
    base: PackFile
    overlays: list[PackFile] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    origins: dict[tuple, Origin] = field(default_factory=dict)

    def locate(self, path: tuple, key: bool = False) -> tuple[str, Position]:
        """The file and position a merged path came from (its nearest recorded ancestor)."""
        probe = tuple(path)
        while True:
            if probe in self.origins:
                pack_file, source_path = self.origins[probe]
                suffix = tuple(path[len(probe) :])
                return pack_file.file, pack_file.loaded.position_of(
                    (*source_path, *suffix), key=key
                )
            if not probe:
                return self.base.file, Position(1, 1)
            probe = probe[:-1]

    def origin_file(self, path: tuple) -> PackFile:
        probe = tuple(path)
        while probe and probe not in self.origins:
            probe = probe[:-1]
        return self.origins.get(probe, (self.base, ()))[0]


def merge_packs(
    bases: list[PackFile], overlays: list[PackFile]
) -> tuple[dict[str, MergedPack], list[Diagnostic], list[IgnoredItem]]:
    """The merged packs, what the overlays got wrong, and the project overlays left out."""
    diagnostics: list[Diagnostic] = []
    ignored: list[IgnoredItem] = []
    merged = {base.name: _start(base) for base in bases}
    by_name: dict[str, PackFile] = {}
    for overlay in overlays:
        clash = by_name.get(overlay.name) or (
            merged[overlay.name].base if overlay.name in merged else None
        )
        if clash is not None:
            diagnostics.append(
                overlay.at(
                    ("pack",),
                    "duplicate-pack",
                    f"pack name {overlay.name!r} is already used by {clash.file}",
                    "give the overlay its own name; `extends:` says what it layers onto",
                )
            )
            continue
        by_name[overlay.name] = overlay

    chains: list[tuple[int, PackFile, str]] = []
    for overlay in by_name.values():
        resolved = _resolve_chain(overlay, by_name, set(merged), diagnostics)
        if resolved is not None:
            depth, base_name = resolved
            chains.append((depth, overlay, base_name))

    # Untrusted project overlays go last, so each is judged against the packs as the shipped
    # files and the user's own overlays left them, limits included.
    limits: dict[str, PackLimits] | None = None
    for _depth, overlay, base_name in sorted(
        chains,
        key=lambda c: (
            c[1].origin == UNTRUSTED_PROJECT,
            c[0],
            ORIGIN_ORDER.get(c[1].origin, 0),
            c[1].file,
        ),
    ):
        target = merged[base_name]
        if overlay.origin == UNTRUSTED_PROJECT:
            if limits is None:
                limits = _limits_in_force(merged)
            if base_name in limits:
                item = _apply_judged(target, overlay, limits[base_name], diagnostics)
                if item is not None:
                    ignored.append(item)
                continue
        target.overlays.append(overlay)
        diagnostics.extend(_apply(target, overlay))
    return merged, diagnostics, ignored


def _limits_in_force(merged: dict[str, MergedPack]) -> dict[str, PackLimits]:
    if LIMITS_PACK in merged:
        return read_limits(merged[LIMITS_PACK].data)
    # A check without the shipped packs still judges by the shipped limits: never fail open.
    from capy.rules.ruleset import shipped_files

    shipped = next((pack for pack in shipped_files() if pack.name == LIMITS_PACK), None)
    return read_limits(shipped.data if shipped else None)


def _apply_judged(
    target: MergedPack, overlay: PackFile, limits: PackLimits, diagnostics: list[Diagnostic]
) -> IgnoredItem | None:
    """Apply an untrusted project overlay only if it loosens nothing; else undo it and say so."""
    data, origins = copy.deepcopy(target.data), dict(target.origins)
    diagnostics.extend(_apply(target, overlay))
    reasons = loosened(limits, data, target.data)
    if not reasons:
        target.overlays.append(overlay)
        return None
    target.data, target.origins = data, origins
    item = IgnoredItem("overlay", overlay.file, overlay.name, tuple(reasons), target.name)
    diagnostics.append(
        overlay.at(
            ("extends",),
            "project-overlay-ignored",
            f"ignored: {item.summary()}",
            "run `capy trust` in the project if you trust its files",
            severity="warning",
        )
    )
    return item


def _start(base: PackFile) -> MergedPack:
    pack = MergedPack(name=base.name, base=base, data=copy.deepcopy(base.data))
    for path in base.loaded.positions:
        pack.origins[path] = (base, path)
    return pack


def _resolve_chain(
    overlay: PackFile, overlays: dict[str, PackFile], bases: set[str], diagnostics: list[Diagnostic]
) -> tuple[int, str] | None:
    seen = [overlay.name]
    current = overlay
    for depth in range(1, MAX_EXTENDS_DEPTH + 2):
        target = current.data.get("extends")
        if not isinstance(target, str):  # a list or a mapping cannot even be looked up
            diagnostics.append(
                current.at(
                    ("extends",),
                    "wrong-type",
                    f"`extends` must name one pack as text, not {type(target).__name__}",
                    "write the name of the pack it layers onto, e.g. `extends: secrets`",
                )
            )
            return None
        if target in bases:
            if depth > MAX_EXTENDS_DEPTH:
                break
            return depth, target
        if target in seen:
            cycle = " -> ".join([*seen, target])
            diagnostics.append(
                overlay.at(
                    ("extends",),
                    "extends-cycle",
                    f"overlay extension forms a cycle: {cycle}",
                    "one overlay in the chain must extend a shipped pack",
                )
            )
            return None
        if target not in overlays:
            close = difflib.get_close_matches(str(target), [*bases, *overlays], n=1)
            hint = (
                f"did you mean {close[0]!r}?"
                if close
                else "known packs: " + ", ".join(sorted(bases))
            )
            diagnostics.append(
                current.at(("extends",), "unknown-pack", f"extends unknown pack {target!r}", hint)
            )
            return None
        seen.append(target)
        current = overlays[target]
    diagnostics.append(
        overlay.at(
            ("extends",),
            "extends-too-deep",
            f"overlay extension is deeper than {MAX_EXTENDS_DEPTH} levels: " + " -> ".join(seen),
            "extend the shipped pack or a closer overlay directly",
        )
    )
    return None


def _apply(target: MergedPack, overlay: PackFile) -> list[Diagnostic]:
    diagnostics = []
    # A `patch` that is no mapping or a `disable` that is no list was reported by the overlay
    # schema; it applies nothing rather than crash the merge.
    patch = _of_type(overlay.data.get("patch"), dict)
    for key in patch:
        if key in HEADER_KEYS:
            diagnostics.append(
                overlay.at(
                    ("patch", key),
                    "patch-header",
                    f"an overlay cannot change the header key {key!r}",
                    "set it in the overlay's own header instead",
                    key=True,
                )
            )
    body = {key: value for key, value in patch.items() if key not in HEADER_KEYS}
    _merge_mapping(target, target.data, body, (), ("patch",), overlay)
    for index, rule_id in enumerate(_of_type(overlay.data.get("disable"), list)):
        found = find_rule(target.data, rule_id)
        if found is None:
            known = [rid for rid, _ in iter_rules(target.data)]
            close = difflib.get_close_matches(str(rule_id), known, n=1)
            diagnostics.append(
                overlay.at(
                    ("disable", index),
                    "unknown-rule",
                    f"overlay disables unknown rule id {rule_id!r}",
                    f"did you mean {close[0]!r}?"
                    if close
                    else f"`capy rules show {target.name}` lists its ids",
                )
            )
            continue
        path, rule = found
        rule["status"] = "disabled"
        target.origins[(*path, "status")] = (overlay, ("disable", index))
    return diagnostics


def _of_type(value: object, kind: type) -> dict | list:
    return value if isinstance(value, kind) else kind()


def _merge_mapping(
    target: MergedPack, base: dict, patch: dict, tpath: tuple, ppath: tuple, overlay: PackFile
) -> None:
    for key, value in patch.items():
        here, there = (*tpath, key), (*ppath, key)
        current = base.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            _merge_mapping(target, current, value, here, there, overlay)
        elif is_rule_list(current) and isinstance(value, list):
            _merge_rules(target, current, value, here, there, overlay)
        else:
            base[key] = copy.deepcopy(value)
            _claim(target, here, overlay, there)


def _merge_rules(
    target: MergedPack, base: list, patch: list, tpath: tuple, ppath: tuple, overlay: PackFile
) -> None:
    index_by_id = {item["id"]: i for i, item in enumerate(base) if isinstance(item, dict)}
    for position, item in enumerate(patch):
        there = (*ppath, position)
        rule_id = item.get("id") if isinstance(item, dict) else None
        # Only a text id can name a rule; anything else is appended for the schema to report.
        if isinstance(rule_id, str) and rule_id in index_by_id:
            slot = index_by_id[rule_id]
            _merge_mapping(target, base[slot], item, (*tpath, slot), there, overlay)
            continue
        base.append(copy.deepcopy(item))
        _claim(target, (*tpath, len(base) - 1), overlay, there)


def _claim(target: MergedPack, tpath: tuple, overlay: PackFile, ppath: tuple) -> None:
    """Record that everything at and below tpath now comes from the overlay at ppath."""
    size = len(tpath)
    for path in [p for p in target.origins if p[:size] == tpath]:
        del target.origins[path]
    psize = len(ppath)
    for path in overlay.loaded.positions:
        if path[:psize] == ppath:
            target.origins[(*tpath, *path[psize:])] = (overlay, path)


def is_rule_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(item, dict) and isinstance(item.get("id"), str) for item in value)
    )


def iter_rules(data: Any, path: tuple = ()) -> Iterator[tuple[str, tuple]]:
    """Every rule (a mapping with a string `id` and a `status`) in a document, with its path."""
    if isinstance(data, dict):
        if isinstance(data.get("id"), str) and "status" in data:
            yield data["id"], path
        for key, value in data.items():
            yield from iter_rules(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from iter_rules(value, (*path, index))


def find_rule(data: Any, rule_id: str) -> tuple[tuple, dict] | None:
    for found_id, path in iter_rules(data):
        if found_id == rule_id:
            node = data
            for part in path:
                node = node[part]
            return path, node
    return None
