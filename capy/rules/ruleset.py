"""Discovering, validating and merging every pack into one RuleSet the rest of capy reads."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from capy.rules.diagnostics import Diagnostic, render_text, with_frame
from capy.rules.hashing import index_version
from capy.rules.overlays import MergedPack, merge_packs
from capy.rules.packfile import (
    OVERLAY_SCHEMA,
    PackFile,
    header_diagnostics,
    read_pack_file,
    read_path,
)
from capy.rules.positions import Loaded, Position
from capy.rules.project_limits import TRUSTED_PROJECT, UNTRUSTED_PROJECT
from capy.rules.resources import shipped_pack_files
from capy.rules.viewing import active_only as active_only  # where callers found it
from capy.rules.viewing import build_view
from capy.trust.ignored import IgnoredItem, warn_ignored


class RulesError(Exception):
    """The packs in force have errors; capy refuses to guess at policy."""

    def __init__(self, diagnostics: Sequence[Diagnostic]):
        self.diagnostics = list(diagnostics)
        errors = [item for item in self.diagnostics if item.is_error]
        first = errors[0] if errors else None
        summary = f"{first.location()}: {first.message}" if first else "rule packs have errors"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(f"rule packs have errors: {summary}{more}; run `capy rules validate`")

    def render(self) -> str:
        return render_text(self.diagnostics)


@dataclass
class RuleSet:
    packs: dict[str, MergedPack]
    files: list[PackFile]
    diagnostics: list[Diagnostic]
    examples: Any = None  # an ExampleReport when examples were run
    # Untrusted project overlays left out because they would loosen a security-relevant pack.
    ignored: list[IgnoredItem] = field(default_factory=list)
    _views: dict[str, Any] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        # The packs' full text would run to megabytes: test reports and debuggers print this.
        state = "ok" if self.ok else f"{len(self.diagnostics)} diagnostics"
        return f"RuleSet({', '.join(sorted(self.packs))}; {state})"

    @property
    def ok(self) -> bool:
        return not any(item.is_error for item in self.diagnostics)

    @cached_property
    def index_version(self) -> str:
        # A rule set is never changed after it is built, so its hash is computed once.
        return index_version(self.packs.values())

    def pack(self, name: str) -> MergedPack:
        return self.packs[name]

    def view(self, name: str) -> Any:
        """The typed, frozen view of a pack, with disabled rules left out."""
        if name not in self._views:
            self._views[name] = build_view(name, self.packs[name].data)
        return self._views[name]


def shipped_files(use_disk: bool = True) -> list[PackFile]:
    # Keyed by the shipped files' stamps too: a long-lived process that outlives an upgrade
    # (or a checkout) must parse the new packs, or it would write the old ones to the disk
    # cache under the new files' key, where every later process would read them.
    return list(_shipped_files_cached(use_disk, _shipped_stamp()))


def _shipped_stamp() -> tuple:
    from capy.rules.cache import file_stamp
    from capy.rules.resources import shipped_schema_files

    entries = [*shipped_pack_files(), *shipped_schema_files()]
    return tuple((entry.name, file_stamp(str(entry))) for entry in entries)


@cache
def _shipped_files_cached(use_disk: bool, _stamp: tuple) -> tuple[PackFile, ...]:
    """The shipped packs, parsed. With `use_disk`, read back from the shipped-packs cache when
    an earlier process parsed and schema-checked the same files (capy.rules.shipped_cache)."""
    from capy.rules.resources import shipped_schema_files
    from capy.rules.shipped_cache import read_shipped, shipped_key, write_shipped

    texts = {
        f"rules/{entry.name}": entry.read_text(encoding="utf-8") for entry in shipped_pack_files()
    }
    key = shipped_key(texts, [(entry.name, entry.read_bytes()) for entry in shipped_schema_files()])
    cached = read_shipped(key, list(texts)) if use_disk else None
    if cached is not None:
        files = tuple(PackFile(file, text, cached[file], "shipped") for file, text in texts.items())
        for pack in files:
            _remember_schema_clean(pack)
        return files
    parsed = []
    for file, text in texts.items():
        pack, problems = read_pack_file(text, file, "shipped")
        if problems:
            raise RulesError(problems)
        parsed.append(pack)
    if use_disk and not any(_file_schema_diagnostics(pack, _schema_of(pack)) for pack in parsed):
        write_shipped(key, {pack.file: pack.loaded for pack in parsed})
    return tuple(parsed)


def overlay_dirs(project_dir: Path | None) -> list[tuple[Path, str]]:
    """Overlay folders in force, lowest precedence first: user, extra dirs, project.

    The project folder's origin says whether the user trusts the project as its files are now
    (TRUSTED_PROJECT) or not (UNTRUSTED_PROJECT, whose overlays may only tighten security).
    """
    from capy.config import load_settings
    from capy.config.paths import project_root, project_rules_dir, user_rules_dir
    from capy.trust.store import is_trusted

    root = project_root(project_dir or Path.cwd())
    settings = load_settings(root).settings
    dirs = [(user_rules_dir(), "user")]
    dirs.extend((Path(extra).expanduser(), "user") for extra in settings.rules.extra_dirs)
    rules_dir = project_rules_dir(root)
    trusted = bool(files_in(rules_dir)) and is_trusted(root)
    dirs.append((rules_dir, TRUSTED_PROJECT if trusted else UNTRUSTED_PROJECT))
    return dirs


def files_in(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(path for path in directory.iterdir() if path.suffix in (".yaml", ".yml"))


def build_ruleset(
    candidates: Iterable[tuple[Path, str]] = (),
    *,
    examples: bool = False,
    include_shipped: bool = True,
    shipped_cache: bool = True,
) -> RuleSet:
    """Validate and merge the shipped packs plus the given files (full packs or overlays).

    A full pack given explicitly replaces the shipped pack of the same name, so an edited copy
    can be checked in the context of all the others.
    """
    # Imported here: jsonschema and the lint are only needed when packs are actually checked,
    # not when a cached rule set is read back by a hook.
    from capy.rules.lint import lint_packs, run_examples, trial_patterns
    from capy.rules.schemas import schema_diagnostics, schema_names

    diagnostics: list[Diagnostic] = []
    parsed: list[PackFile] = []
    for path, origin in candidates:
        pack, problems = read_path(path, origin)
        diagnostics.extend(problems)
        if pack is not None:
            parsed.append(pack)
    explicit_names = {pack.name for pack in parsed if not pack.is_overlay}
    shipped = (
        [pack for pack in shipped_files(shipped_cache) if pack.name not in explicit_names]
        if include_shipped
        else []
    )
    files = shipped + parsed

    known = schema_names()
    for pack in files:
        diagnostics.extend(header_diagnostics(pack, known))
        schema = _schema_of(pack)
        if schema in known:
            diagnostics.extend(_file_schema_diagnostics(pack, schema))

    bases, overlays, seen = [], [], {}
    for pack in files:
        if pack.is_overlay:
            overlays.append(pack)
        elif pack.name in seen:
            diagnostics.append(
                pack.at(
                    ("pack",),
                    "duplicate-pack",
                    f"pack {pack.name!r} is also defined in {seen[pack.name]}",
                    "each pack name appears once; layer changes with an overlay",
                )
            )
        elif pack.name:
            seen[pack.name] = pack.file
            bases.append(pack)

    merged, merge_problems, ignored = merge_packs(bases, overlays)
    diagnostics.extend(merge_problems)
    for pack in merged.values():
        if pack.overlays and pack.base.schema in known:
            overlay_files = {overlay.file for overlay in pack.overlays}
            diagnostics.extend(
                item
                for item in schema_diagnostics(pack.data, pack.base.schema, pack.locate)
                if item.file in overlay_files
            )
    diagnostics.extend(lint_packs(merged.values()))
    report = None
    if examples:
        slow, skip = trial_patterns(merged.values())
        diagnostics.extend(slow)
        report = run_examples(merged.values(), skip)
    if report:
        diagnostics.extend(report.failures)
    texts = {pack.file: pack.text for pack in files}
    framed = [with_frame(item, texts.get(item.file)) for item in _dedupe(diagnostics)]
    return RuleSet(merged, files, framed, report, ignored)


# A file's schema diagnostics depend only on its name, its text and the schema, and the
# shipped packs are the same on every build: validating them again costs about half a build.
_SCHEMA_MEMO: dict[tuple[str, str, str], tuple[Diagnostic, ...]] = {}
_SCHEMA_MEMO_SIZE = 64


def _schema_of(pack: PackFile) -> str:
    return OVERLAY_SCHEMA if pack.is_overlay else pack.schema


def _remember_schema_clean(pack: PackFile) -> None:
    """A pack read back from the shipped-packs cache passed its schema when it was written."""
    _SCHEMA_MEMO[(pack.file, pack.text, _schema_of(pack))] = ()


def _file_schema_diagnostics(pack: PackFile, schema: str) -> tuple[Diagnostic, ...]:
    from capy.rules.schemas import schema_diagnostics

    key = (pack.file, pack.text, schema)
    found = _SCHEMA_MEMO.get(key)
    if found is None:
        found = tuple(schema_diagnostics(pack.data, schema, _file_locator(pack)))
        if len(_SCHEMA_MEMO) >= _SCHEMA_MEMO_SIZE:
            _SCHEMA_MEMO.pop(next(iter(_SCHEMA_MEMO)))
        _SCHEMA_MEMO[key] = found
    return found


def _file_locator(pack: PackFile):
    def locate(path: tuple, key: bool):
        return pack.file, pack.loaded.position_of(path, key=key)

    return locate


def _dedupe(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    seen, out = set(), []
    for item in diagnostics:
        # The schema's regex format check and the lint's compile check find the same fault;
        # one report per spot and code is enough.
        marker = (item.file, item.line, item.column, item.code)
        if marker not in seen:
            seen.add(marker)
            out.append(item)
    return out


def overlay_candidates(project_dir: Path | None = None) -> list[tuple[Path, str]]:
    return [
        (path, origin)
        for directory, origin in overlay_dirs(project_dir)
        for path in files_in(directory)
    ]


def load_rules(project_dir: Path | None = None) -> RuleSet:
    """The rules in force for a project: shipped packs plus user and project overlays.

    Cached in the process and on disk, both keyed by the content of every file involved, so a
    long-running server notices an edited overlay and a fresh hook process skips validation.
    Raises RulesError when the packs in force have errors.
    """
    from capy.rules.cache import cache_key

    candidates = overlay_candidates(project_dir)
    ruleset = _load_cached(cache_key(candidates), tuple(candidates))
    warn_ignored(ruleset.ignored)
    return ruleset


@cache
def _load_cached(key: str, candidates: tuple[tuple[Path, str], ...]) -> RuleSet:
    from capy.rules.cache import write_cache

    cached = ruleset_from_cache(key)
    if cached is not None:
        return cached
    ruleset = build_ruleset(list(candidates))
    if not ruleset.ok:
        raise RulesError(ruleset.diagnostics)
    write_cache(key, _packs_to_cache(ruleset), [item.as_json() for item in ruleset.ignored])
    return ruleset


def ruleset_from_cache(key: str) -> RuleSet | None:
    """The rule set compiled under `key` (see capy.rules.cache), or None when it is not there."""
    from capy.rules.cache import read_cache

    cached = read_cache(key)
    if cached is None:
        return None
    ignored = [IgnoredItem(**_ignored_fields(item)) for item in cached.get("ignored", [])]
    return RuleSet(_packs_from_cache(cached["packs"]), [], [], ignored=ignored)


def _ignored_fields(item: dict[str, Any]) -> dict[str, Any]:
    return {**item, "reasons": tuple(item.get("reasons", ()))}


def _packs_to_cache(ruleset: RuleSet) -> dict[str, Any]:
    return {
        name: {
            "data": pack.data,
            "file": pack.base.file,
            "overlays": [[overlay.file, overlay.name] for overlay in pack.overlays],
        }
        for name, pack in ruleset.packs.items()
    }


def _packs_from_cache(entries: dict[str, Any]) -> dict[str, MergedPack]:
    """Merged packs without positions: enough for views, hashing and listings."""

    def stub(file: str, data: dict[str, Any]) -> PackFile:
        return PackFile(file, "", Loaded(data, {(): Position(1, 1)}, {}), "cache")

    packs = {}
    for name, entry in entries.items():
        overlays = [stub(file, {"pack": overlay_name}) for file, overlay_name in entry["overlays"]]
        packs[name] = MergedPack(name, stub(entry["file"], entry["data"]), overlays, entry["data"])
    return packs
