"""Capsules: what happened in agent sessions, kept as immutable, hash-chained units, and the
pipeline that derives everything else from them.

    from capy.capsules import CapsuleDraft, open_capsules

    with open_capsules() as capsules:
        capsules.write([CapsuleDraft(kind="note", content="...", source="cli")])

- `capy.capsules.model`: the capsule, its canonical JSON and id.
- `capy.capsules.chain`: the per-scope hash chain and its check.
- `capy.capsules.writing`: drafts checked against the capsules pack and redacted.
- `capy.capsules.versions`: derivation versions of the pipeline's stages.
- `capy.capsules.archive`: closed days sealed as segments beside the log, exports, and the
  verified reading of both; `capy.capsules.importing` (JSONL and segment folders) and
  `capy.capsules.backfill` (the session vault) load capsules in bulk.
- `capy.capsules.backend`: what a storage backend provides (the log, the job queue, derived
  tables); `capy.capsules.sqlite` implements it on SQLCipher.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from capy.capsules.location import CAPSULES_SETTING, CapsulesLocation, locate_capsules
from capy.capsules.model import Capsule, CapsuleDraft, CapsuleError, Scope
from capy.store import Store
from capy.store.database import Notify, stderr_notice

if TYPE_CHECKING:
    from capy.capsules.chain import ChainReport
    from capy.capsules.sqlite import SqliteBackend
    from capy.capsules.sqlite.log import Appended, OutboxJob, Prepared
    from capy.rules.ruleset import RuleSet


@dataclass
class CapsuleStore(Store):
    """An open capsule log: the knowledge base's `Store` shape, its own location, and the rules
    it writes by."""

    location: CapsulesLocation  # type: ignore[assignment]
    _rules: RuleSet | None = field(default=None, repr=False)

    @cached_property
    def rules(self) -> RuleSet:
        if self._rules is not None:
            return self._rules
        from capy.rules import load_rules

        return load_rules(self.location.project_root)

    @cached_property
    def backend(self) -> SqliteBackend:
        from capy.capsules.sqlite import SqliteBackend

        return SqliteBackend(self.conn)

    @cached_property
    def stage_versions(self) -> dict[str, str]:
        """Each live stage's derivation version under this store's rules: hashing the packs
        that shape them costs more than a small write, so it is done once per store."""
        from capy.capsules.versions import current_versions

        return current_versions(self.rules)

    @property
    def default_scope(self) -> Scope:
        return Scope(str(self.location.project_root))

    def write(self, drafts: Sequence[CapsuleDraft]) -> list[Appended]:
        """Store `drafts` (redacted, checked, chained) with their pipeline jobs, in one
        transaction; a capsule already stored is reported with `new=False`."""
        return self.append(self.prepare(drafts))

    def prepare(self, drafts: Sequence[CapsuleDraft]) -> list[Prepared]:
        """`drafts` checked, redacted and hashed, nothing written: a bulk import prepares all
        of its capsules first, so a bad one stops it before any is stored."""
        from capy.capsules.writing import prepare

        return prepare(
            drafts,
            pack=self.rules.view("capsules"),
            secrets=self.rules.view("secrets"),
            default_scope=self.default_scope,
        )

    def append(self, prepared: Sequence[Prepared]) -> list[Appended]:
        """Store prepared capsules with their pipeline jobs, in one transaction."""
        return self.backend.append(prepared, self._outbox)

    @cached_property
    def _outbox(self) -> list[OutboxJob]:
        from capy.capsules.sqlite.log import OutboxJob

        return [
            OutboxJob(stage.name, self.stage_versions[stage.name])
            for stage in self.rules.view("capsules").live_stages
            if stage.per == "capsule"
        ]

    def find(self, id_or_prefix: str) -> tuple[int, Capsule]:
        """The one capsule whose id is or starts with `id_or_prefix`; a `CapsuleError` when
        none or several match."""
        if len(id_or_prefix.strip()) < 6:
            raise CapsuleError("give at least 6 characters of the capsule id")
        found = self.backend.get(id_or_prefix)
        exact = [pair for pair in found if pair[1].id == id_or_prefix.strip().lower()]
        if exact:
            return exact[0]
        if not found:
            raise CapsuleError(f"no capsule has an id starting with {id_or_prefix!r}")
        if len(found) > 1:
            raise CapsuleError(f"several capsules start with {id_or_prefix!r}: give more of the id")
        return found[0]

    def verify(self, scope: Scope | None = None) -> list[ChainReport]:
        """Check every scope's chain (or one scope's): ids, links, order and head."""
        from capy.capsules.chain import check_chain

        backend = self.backend
        known = backend.heads()
        wanted = [scope] if scope is not None else sorted(set(backend.scopes()) | set(known))
        return [
            check_chain(
                f"{each.tenant}/{each.project}",
                backend.chain_links(each),
                known.get(each),
                backend.forgotten_count(each),
            )
            for each in wanted
        ]

    def forget(self, id_or_prefix: str, reason: str) -> Capsule:
        """Erase one capsule's content and metadata and everything derived from it; its id and
        place in the chain stay, with the reason."""
        reason = " ".join(reason.split())
        if not reason:
            raise CapsuleError("say why the capsule is forgotten: --reason TEXT")
        n, capsule = self.find(id_or_prefix)
        if capsule.forgotten:
            raise CapsuleError(f"capsule {capsule.id[:12]} was already forgotten")
        from capy.security.redaction import redact_text

        self.backend.tombstone(n, capsule, redact_text(reason, secrets=self.rules.view("secrets")))
        from capy.capsules.archive import erase_forgotten

        erase_forgotten(self)  # a sealed copy of the capsule goes too
        return capsule


def open_capsules(
    path: Path | None = None,
    *,
    project_dir: Path | None = None,
    rules: RuleSet | None = None,
    notify: Notify = stderr_notice,
) -> CapsuleStore:
    """Open (creating on first use) the capsule log, migrated; raises a `StoreError` with a
    message a person can act on."""
    return open_located_capsules(locate_capsules(path, project_dir), rules=rules, notify=notify)


def open_located_capsules(
    location: CapsulesLocation, *, rules: RuleSet | None = None, notify: Notify = stderr_notice
) -> CapsuleStore:
    """`open_capsules` for a log already located (a pool reopening the same file)."""
    from capy.capsules.sqlite.schema import prepare_capsules
    from capy.store import refuse_missing_key_file
    from capy.store.database import open_database
    from capy.store.failures import explained_failures
    from capy.store.keys import load_key

    with explained_failures(location.path, what="the capsule log", setting=CAPSULES_SETTING):
        refuse_missing_key_file(location)
        key = load_key(location.key_source)
        conn = open_database(location.path, key, notify=notify, migrator=prepare_capsules)
    return CapsuleStore(conn=conn, location=location, key=key, _rules=rules)


__all__ = [
    "Capsule",
    "CapsuleDraft",
    "CapsuleError",
    "CapsuleStore",
    "CapsulesLocation",
    "Scope",
    "open_capsules",
    "open_located_capsules",
]
