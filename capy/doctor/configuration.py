"""Checks of what capy reads: its config files, the rule packs, and the key files."""

from __future__ import annotations

import stat

from capy.doctor.context import DoctorContext
from capy.doctor.report import Check, Status

GROUP = "Configuration"
_KEY_NAMES = ("db", "vault", "capsules")  # the knowledge base, the session vault, the capsule log


def config_files(ctx: DoctorContext) -> list[Check]:
    from capy.config import ConfigError, load_settings

    try:
        resolved = load_settings(ctx.project_dir)
    except ConfigError as error:
        return [
            Check(
                GROUP,
                "config",
                Status.FAIL,
                "; ".join(error.lines),
                "fix the named file or variable; `capy config show` shows what loads",
            )
        ]
    ctx.settings = resolved.settings
    found = [ctx.shown(path) for path in resolved.files if path.is_file()]
    variables = sorted({src for src in resolved.provenance.values() if src.startswith("CAPY_")})
    sources = found + variables
    detail = "loads from " + ", ".join(sources) if sources else "built-in defaults (no config file)"
    return [Check(GROUP, "config", Status.OK, detail), *_ignored_checks(resolved.ignored)]


def rule_packs(ctx: DoctorContext) -> list[Check]:
    from capy.rules import RulesError, build_ruleset, load_rules
    from capy.rules.ruleset import overlay_candidates

    overlays = [ctx.shown(path) for path, _ in overlay_candidates(ctx.project_dir)]

    try:
        # The same load every capy process does, cached by content: a valid set is quick.
        ruleset = load_rules(ctx.project_dir)
    except RulesError as error:
        ctx.ruleset, ctx.overlays_ok = build_ruleset(), False
        errors = [item for item in error.diagnostics if item.is_error]
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return [
            Check(
                GROUP,
                "rule packs",
                Status.FAIL,
                f"{first.location()}: {first.message}{more}; capy refuses to run with these packs",
                "run `capy rules validate` for every error, then fix or remove the overlay",
            )
        ]
    ctx.ruleset = ruleset
    detail = f"{len(ruleset.packs)} packs valid, index_version {ruleset.index_version}"
    if overlays:
        detail += "; overlays: " + ", ".join(overlays)
    return [Check(GROUP, "rule packs", Status.OK, detail), *_ignored_checks(ruleset.ignored)]


def _ignored_checks(ignored) -> list[Check]:
    """One warning per project overlay or config key left out, saying what it would loosen."""
    return [
        Check(
            GROUP,
            "project overlay" if item.kind == "overlay" else "project config",
            Status.WARN,
            f"ignored {item.file} ({item.name}): {item.summary()}",
            "review the file; if you trust this project, run `capy trust` in it",
        )
        for item in ignored
    ]


def key_files(ctx: DoctorContext) -> list[Check]:
    from capy.store.keys import key_source

    settings = ctx.settings
    if settings is None:
        return []  # the config check already failed and said why
    checks = []
    for name in _KEY_NAMES:
        secret = getattr(settings, f"{name}_key", None)
        source = key_source(name, secret, settings.key_dir)
        checks.append(_key_check(ctx, name, source))
    return checks


def _key_check(ctx: DoctorContext, name: str, source) -> Check:
    from capy.store.keys import after_exposure

    title = f"{name} key"
    if not source.is_key_file:
        return Check(GROUP, title, Status.OK, f"set by {source.env_var} or the user config")
    path = source.key_file
    shown = ctx.shown(path)
    if not path.exists():
        return Check(
            GROUP, title, Status.OK, f"{shown} not created yet; capy makes it (0600) on first use"
        )
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        return Check(
            GROUP,
            title,
            Status.FAIL,
            f"{shown} is readable by other users (mode {mode:o}); capy refuses to use it",
            f"run `chmod 600 {path}`; {after_exposure(name)}",
        )
    return Check(GROUP, title, Status.OK, f"{shown} (mode {mode:o})")
