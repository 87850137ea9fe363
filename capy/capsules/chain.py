"""The hash chain that makes each scope's capsules tamper-evident.

Capsule n of a scope stores `prev_hash` (capsule n-1's chain hash, GENESIS for the first) and
`chain_hash = sha256(prev_hash ":" id)`. The scope's head (its last seq and chain hash) is kept
apart, so dropping the newest capsules shows too. Erasure keeps ids, so a forgotten capsule
keeps the chain whole.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

GENESIS = "0" * 64


def link_hash(prev_hash: str, capsule_id: str) -> str:
    return hashlib.sha256(f"{prev_hash}:{capsule_id}".encode("ascii")).hexdigest()


@dataclass(frozen=True)
class ChainLink:
    """What verification reads of one stored capsule."""

    seq: int
    capsule_id: str
    prev_hash: str
    chain_hash: str
    id_matches: bool  # the id recomputed from the fields (True for forgotten capsules)


@dataclass
class ChainReport:
    scope: str
    capsules: int = 0
    forgotten: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_chain(
    scope: str, links: Iterable[ChainLink], head: tuple[int, str] | None, forgotten: int = 0
) -> ChainReport:
    """Walk one scope's links in seq order; every gap, mismatch and broken link is a problem."""
    report = ChainReport(scope=scope, forgotten=forgotten)
    expected_seq, prev = 1, GENESIS
    for link in links:
        report.capsules += 1
        if link.seq != expected_seq:
            report.problems.append(f"capsules {expected_seq}..{link.seq - 1} are missing")
        if not link.id_matches:
            report.problems.append(f"capsule {link.seq} ({link.capsule_id[:12]}) was altered")
        if link.prev_hash != prev:
            report.problems.append(f"capsule {link.seq} does not follow the one before it")
        if link.chain_hash != link_hash(link.prev_hash, link.capsule_id):
            report.problems.append(f"capsule {link.seq} has a wrong chain hash")
        expected_seq, prev = link.seq + 1, link.chain_hash
    last = (expected_seq - 1, prev)
    if head is not None and head != last:
        if head[0] > last[0]:
            report.problems.append(f"capsules {last[0] + 1}..{head[0]} are missing (the newest)")
        else:
            report.problems.append("the scope's recorded head does not match its last capsule")
    if head is None and report.capsules:
        report.problems.append("the scope has capsules but no recorded head")
    return report
