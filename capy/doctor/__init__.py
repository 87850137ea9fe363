"""`capy doctor`: check every part of capy and say what to do about each problem.

`run_doctor` never raises: every check catches its own failure and reports it as one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from capy.doctor.context import DoctorContext
from capy.doctor.report import Check, DoctorReport, Status

__all__ = ["Check", "DoctorReport", "Status", "run_doctor"]

CheckFunction = Callable[[DoctorContext], list[Check]]


def _checks() -> list[tuple[str, str, CheckFunction]]:
    # Order matters: the config and packs checks fill in what later checks read.
    from capy.doctor import agents, configuration, environment, knowledge, semantic

    return [
        (environment.GROUP, "Python and capy", environment.python_and_capy),
        (configuration.GROUP, "config", configuration.config_files),
        (configuration.GROUP, "rule packs", configuration.rule_packs),
        (configuration.GROUP, "keys", configuration.key_files),
        (environment.GROUP, "SQLCipher and FTS5", environment.sqlcipher_fts5),
        (environment.GROUP, "runtimes", environment.runtimes),
        (environment.GROUP, "sandbox isolation", environment.isolation),
        (semantic.GROUP, semantic.NAME, semantic.semantic_search),
        (knowledge.GROUP, knowledge.NAME, knowledge.knowledge_base),
        (agents.GROUP, "registration", agents.registrations),
        (agents.GROUP, "permission policies", agents.policies),
    ]


def run_doctor(project_dir: Path | None = None) -> DoctorReport:
    """Run every check for the project (default: the working directory's project)."""
    from capy.config.paths import home_dir, project_root

    root = project_root(Path(project_dir) if project_dir else Path.cwd())
    ctx = DoctorContext(project_dir=root, home=home_dir())
    report = DoctorReport()
    for group, name, check in _checks():
        report.checks.extend(_safely(ctx, group, name, check))
    report.checks.sort(key=lambda item: _GROUP_ORDER.index(item.group))
    return report


_GROUP_ORDER = ["Environment", "Configuration", "Knowledge base", "Agents"]


def _safely(ctx: DoctorContext, group: str, name: str, check: CheckFunction) -> list[Check]:
    if ctx.ruleset is None and name not in ("Python and capy", "config", "rule packs"):
        _shipped_rules(ctx)
    from capy.config import ConfigError

    try:
        return check(ctx)
    except ConfigError:
        # Reported once by the config check; the checks that need settings say why they stop.
        detail = "not checked: capy's config does not load (see the config check)"
        return [Check(group, name, Status.WARN, detail, "fix the config first")]
    except Exception as error:  # a doctor that crashes tells nobody anything
        return [
            Check(
                group,
                name,
                Status.FAIL,
                f"the check itself failed: {type(error).__name__}: {error}",
                "report this with the output of `capy doctor --json`",
            )
        ]


def _shipped_rules(ctx: DoctorContext) -> None:
    """Later checks still run on the shipped packs when the packs check could not finish."""
    try:
        from capy.rules import build_ruleset

        ctx.ruleset, ctx.overlays_ok = build_ruleset(), False
    except Exception:
        pass
