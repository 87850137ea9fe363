"""What `capy doctor` found: checks with a status, a detail, and what to do about a problem."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


_LABELS = {Status.OK: "ok", Status.WARN: "warn", Status.FAIL: "FAIL"}


def status_label(status: Status) -> str:
    """How a status is written in the report: a failure stands out even without colour."""
    return _LABELS[status]


@dataclass(frozen=True)
class Check:
    group: str  # the section it is shown under: Environment, Configuration...
    name: str
    status: Status
    detail: str
    fix: str | None = None  # what to do, for warn and fail


@dataclass
class DoctorReport:
    checks: list[Check] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(check.status is Status.FAIL for check in self.checks)

    def count(self, status: Status) -> int:
        return sum(check.status is status for check in self.checks)

    def summary(self) -> str:
        return (
            f"{self.count(Status.OK)} ok, {self.count(Status.WARN)} warnings, "
            f"{self.count(Status.FAIL)} failures"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": not self.failed,
            "summary": {status.value: self.count(status) for status in Status},
            "checks": [{**asdict(check), "status": check.status.value} for check in self.checks],
        }

    def groups(self) -> dict[str, list[Check]]:
        """The checks by section, in the order they ran."""
        groups: dict[str, list[Check]] = {}
        for check in self.checks:
            groups.setdefault(check.group, []).append(check)
        return groups

    def to_markdown(self) -> str:
        lines = ["# capy doctor", ""]
        for group, checks in self.groups().items():
            lines += [f"## {group}", ""]
            for check in checks:
                lines.append(f"- **{_LABELS[check.status]}** {check.name}: {check.detail}")
                if check.fix and check.status is not Status.OK:
                    lines.append(f"  - fix: {check.fix}")
            lines.append("")
        lines.append(f"**Summary:** {self.summary()}")
        return "\n".join(lines) + "\n"
