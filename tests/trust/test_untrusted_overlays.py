"""A cloned repository's `.capy/rules/` may tighten capy's guards, never loosen them, unless the
user trusts the project; `capy rules list` and `capy doctor` say what was left out and why."""

from __future__ import annotations

import json
import logging

import pytest

from capy.cli import main
from capy.rules import load_rules
from capy.rules.overlays import find_rule
from capy.rules.ruleset import active_only, build_ruleset, overlay_candidates
from capy.security import check_command
from capy.security.redaction import redact

# The secrets pack's own (visibly fake) example for the classic GitHub token.
GITHUB_TOKEN = "ghp_a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"
ACME_TOKEN = "acme_q8w7e6r5t4y3u2i1o9p8a7s6"

NEW_DETECTOR = """\
patch:
  detectors:
    - id: PACK.internal-token
      status: active
      since: "1.0.0"
      description: ACME's internal service token.
      kind: secret
      keywords: [acme_]
      pattern: 'acme_[a-z0-9]{24}'
      examples:
        match: ['ACME=acme_q8w7e6r5t4y3u2i1o9p8a7s6']
        no_match: ['acme_short']
"""

NEW_DENY_POLICY = """\
patch:
  policies:
    - id: PACK.deny-terraform-destroy
      status: active
      since: "1.0.0"
      description: Tearing down the shared staging stack.
      kind: command
      tool: Bash
      decision: deny
      pattern: "terraform destroy:*"
      reason: Staging is shared; destroy it from the console.
      examples:
        match: ["terraform destroy", "terraform destroy -auto-approve"]
        no_match: ["terraform plan"]
"""


def test_a_disabled_secret_detector_is_ignored_and_the_secret_still_redacted(
    project_dir, ship, caplog
):
    ship("quiet.yaml", "secrets", "disable: [secrets.github-pat]\n")
    with caplog.at_level(logging.WARNING, logger="capy.trust"):
        redacted = redact(f"GITHUB_TOKEN={GITHUB_TOKEN}", project_dir=project_dir).text
        load_rules(project_dir)  # a long-running server loads again on every call
    assert GITHUB_TOKEN not in redacted and "secrets.github-pat" in redacted
    [item] = load_rules(project_dir).ignored
    assert (item.kind, item.file, item.name) == ("overlay", ".capy/rules/quiet.yaml", "quiet")
    assert item.reasons == ("disables secrets.github-pat",)
    # One clear line, once per process, naming the file, what it loosens and the way out.
    [record] = [r for r in caplog.records if r.name == "capy.trust"]
    assert record.getMessage() == (
        "capy ignored project overlay .capy/rules/quiet.yaml (quiet): it disables "
        "secrets.github-pat, and a project may only tighten security; run `capy trust` in "
        "the project if you trust its files"
    )


def test_tightening_project_overlays_still_apply(project_dir, ship):
    ship("detector.yaml", "secrets", NEW_DETECTOR)
    ship("deny.yaml", "security", NEW_DENY_POLICY)
    ruleset = load_rules(project_dir)
    assert ruleset.ignored == []
    assert ACME_TOKEN not in redact(f"token {ACME_TOKEN}", project_dir=project_dir).text
    decision = check_command("terraform destroy -auto-approve", project_dir=project_dir)
    assert decision.decision == "deny" and decision.rule == "deny.deny-terraform-destroy"


def test_trust_applies_the_loosening_until_a_project_file_changes(
    project_dir, project_rules_dir, ship, trust_project, capsys
):
    overlay = ship("quiet.yaml", "secrets", "disable: [secrets.github-pat]\n")
    text = f"pushed with {GITHUB_TOKEN} yesterday"
    assert GITHUB_TOKEN not in redact(text, project_dir=project_dir).text

    assert trust_project() == 0
    assert "trusted: " in capsys.readouterr().out
    assert redact(text, project_dir=project_dir).text == text
    assert load_rules(project_dir).ignored == []

    overlay.write_text(overlay.read_text() + "# edited after the trust\n")
    assert GITHUB_TOKEN not in redact(text, project_dir=project_dir).text

    assert trust_project() == 0
    assert redact(text, project_dir=project_dir).text == text
    # A new file is a change too: it was not part of what the user looked at.
    ship("more.yaml", "chunking", "patch:\n  max_chunk_bytes: 2048\n")
    assert GITHUB_TOKEN not in redact(text, project_dir=project_dir).text

    assert trust_project() == 0
    assert trust_project("--revoke") == 0
    assert GITHUB_TOKEN not in redact(text, project_dir=project_dir).text
    assert trust_project("--revoke") == 1
    assert "was not trusted" in capsys.readouterr().err


def test_the_trust_lives_in_the_users_config_dir_not_the_project(project_dir, ship, trust_project):
    from capy.config.paths import config_dir

    ship("quiet.yaml", "secrets", "disable: [secrets.github-pat]\n")
    before = sorted(path.name for path in project_dir.rglob("*"))
    assert trust_project() == 0
    assert sorted(path.name for path in project_dir.rglob("*")) == before
    stored = json.loads((config_dir() / "trusted-projects.json").read_text())
    [entry] = stored["projects"]
    assert entry["root"] == str(project_dir.resolve())
    assert entry["files"] == [".capy/rules/quiet.yaml"]


# Every way an overlay can loosen a security-relevant pack, each in its own file, and what the
# warning says about it. The packs and paths come from the security pack's project_limits.
LOOSENING = {
    "metadata-off.yaml": (
        "security",
        "disable: [security.metadata-link-local-v4]\n",
        "disables security.metadata-link-local-v4",
    ),
    # The views skip a deprecated rule as they skip a disabled one.
    "metadata-deprecated.yaml": (
        "security",
        "patch:\n  ssrf:\n    metadata_hosts:\n"
        "      - {id: security.metadata-gcp, status: deprecated}\n",
        "disables security.metadata-gcp",
    ),
    "detector-experimental.yaml": (
        "secrets",
        "patch:\n  detectors:\n    - {id: secrets.github-pat, status: experimental}\n",
        "overrides secrets.github-pat",
    ),
    "loopback-narrowed.yaml": (
        "security",
        "patch:\n  ssrf:\n    blocked_networks:\n"
        "      - {id: security.ssrf-ipv4-loopback, cidr: 127.0.0.1/32}\n",
        "overrides security.ssrf-ipv4-loopback",
    ),
    "fail-open.yaml": (
        "security",
        "patch:\n  ssrf:\n    fail_closed: false\n",
        "turns off ssrf.fail_closed",
    ),
    "file-scheme.yaml": (
        "security",
        "patch:\n  ssrf:\n    allowed_schemes: [http, https, ftp]\n",
        "adds entries to ssrf.allowed_schemes",
    ),
    "more-redirects.yaml": (
        "security",
        "patch:\n  ssrf:\n    max_redirects: 10\n",
        "raises ssrf.max_redirects from 2 to 10",
    ),
    "lenient-network.yaml": (
        "security",
        "patch:\n  ssrf:\n    blocked_networks:\n"
        "      - {id: PACK.lenient, status: active, since: '1.0.0', cidr: 169.254.169.0/24,"
        " name: x, rfc: RFC 3927, verdict: embedded-ipv4, description: Judged by its IPv4.}\n",
        "adds lenient-network.lenient with verdict 'embedded-ipv4'",
    ),
    "allow-policy.yaml": (
        "security",
        NEW_DENY_POLICY.replace("PACK.deny-terraform-destroy", "PACK.allow-rm")
        .replace("decision: deny", "decision: allow")
        .replace("terraform destroy", "rm -rf build")
        .replace("terraform plan", "rm build"),
        "adds allow-policy.allow-rm with decision 'allow'",
    ),
    "limits-loosened.yaml": (
        "security",
        "disable: [security.project-may-tighten-secrets]\n",
        "disables security.project-may-tighten-secrets",
    ),
    "weaker-regex.yaml": (
        "secrets",
        "patch:\n  detectors:\n"
        "    - {id: secrets.github-pat, pattern: 'ghp_NEVER[A-Za-z0-9]{36}'}\n",
        "overrides secrets.github-pat",
    ),
    "allowlist-ghp.yaml": (
        "secrets",
        "patch:\n  global_allowlist:\n"
        "    - {id: PACK.allow-ghp, status: active, since: '1.0.0', description: All GitHub "
        "tokens are fine., pattern: '^ghp_'}\n",
        "adds allowlist-ghp.allow-ghp to global_allowlist",
    ),
    "keep-ld-preload.yaml": (
        "executor",
        "disable: [executor.strip-prefix-ld]\n",
        "disables executor.strip-prefix-ld",
    ),
    "bigger-output.yaml": (
        "executor",
        "patch:\n  limits:\n    output:\n      hard_cap_bytes: 1073741824\n",
        "raises limits.output.hard_cap_bytes from 104857600 to 1073741824",
    ),
    "deny-misplaced.yaml": (
        "platforms",
        "patch:\n  platforms:\n    - id: platforms.claude-code\n      output:\n"
        "        decision:\n          path: hookSpecificOutput.ignoredByTheAgent\n",
        "overrides platforms.claude-code",
    ),
    "bigger-sources.yaml": (
        "retention",
        "patch:\n  size:\n    max_source_bytes: 1073741824\n",
        "raises size.max_source_bytes from 65536 to 1073741824",
    ),
    "cleanup-deletes.yaml": (
        "retention",
        "patch:\n  cleanup:\n    dry_run: false\n",
        "turns off cleanup.dry_run",
    ),
    # No direction is declared for `env.inherit`, so even this narrower setting is refused:
    # where the limits cannot tell which way is tighter, they fail closed.
    "undecidable.yaml": (
        "executor",
        "patch:\n  env:\n    inherit: passthrough-only\n",
        'changes env.inherit from "all" to "passthrough-only"',
    ),
}

TIGHTENING = {
    "a-detector.yaml": ("secrets", NEW_DETECTOR),
    "a-deny.yaml": ("security", NEW_DENY_POLICY),
    "a-blocked-network.yaml": (
        "security",
        "patch:\n  ssrf:\n    blocked_networks:\n"
        "      - {id: PACK.block-office, status: active, since: '1.0.0', cidr: 203.0.114.0/24,"
        " name: Office, rfc: RFC 1918, description: The office network.}\n",
    ),
    "a-fewer-redirects.yaml": ("security", "patch:\n  ssrf:\n    max_redirects: 2\n"),
    "a-longer-preview.yaml": ("security", "patch:\n  fetch:\n    preview:\n      max_lines: 20\n"),
    "a-strip.yaml": (
        "executor",
        "patch:\n  env:\n    strip:\n      - {id: PACK.strip-token, status: active, since: '1.0.0',"
        " name: ACME_TOKEN, description: Never in the sandbox.}\n",
    ),
    "a-shorter-timeout.yaml": (
        "executor",
        "patch:\n  limits:\n    timeout:\n      max_seconds: 120\n",
    ),
    "a-no-allowlist.yaml": ("secrets", "disable: [secrets.allow-aws-documentation-example]\n"),
    "a-free-pack.yaml": ("chunking", "patch:\n  max_chunk_bytes: 16384\n"),
    "a-smaller-sources.yaml": ("retention", "patch:\n  size:\n    max_source_bytes: 65536\n"),
    "a-retention-tuning.yaml": ("retention", "patch:\n  size:\n    low_water_ratio: 0.5\n"),
}


def test_every_loosening_form_is_ignored_and_every_tightening_one_applies(project_dir, ship):
    for file, (extends, body, _) in LOOSENING.items():
        ship(file, extends, body)
    for file, (extends, body) in TIGHTENING.items():
        ship(file, extends, body)
    ruleset = build_ruleset(overlay_candidates(project_dir))
    assert ruleset.ok, [d.render() for d in ruleset.diagnostics if d.is_error]
    ignored = {item.file.removeprefix(".capy/rules/"): item.reasons for item in ruleset.ignored}
    assert ignored == {file: (reason,) for file, (_, _, reason) in LOOSENING.items()}
    applied = {
        o.file.removeprefix(".capy/rules/") for p in ruleset.packs.values() for o in p.overlays
    }
    assert applied == set(TIGHTENING)
    security = active_only(ruleset.pack("security").data)
    assert find_rule(security, "security.metadata-link-local-v4") is not None
    assert security["ssrf"]["fail_closed"] is True and security["ssrf"]["max_redirects"] == 2
    assert ruleset.pack("chunking").data["max_chunk_bytes"] == 16384
    warnings = [d for d in ruleset.diagnostics if d.code == "project-overlay-ignored"]
    assert len(warnings) == len(LOOSENING) and all(d.severity == "warning" for d in warnings)


@pytest.mark.parametrize("json_output", [False, True])
def test_rules_list_shows_the_ignored_overlays(project_dir, ship, capsys, json_output):
    ship("quiet.yaml", "secrets", "disable: [secrets.github-pat]\n")
    ship("detector.yaml", "secrets", NEW_DETECTOR)
    assert main(["rules", "list", *(["--json"] if json_output else [])]) == 0
    out = capsys.readouterr().out
    if json_output:
        listing = json.loads(out)
        assert listing["ignored"] == [
            {
                "kind": "overlay",
                "file": ".capy/rules/quiet.yaml",
                "name": "quiet",
                "reasons": ["disables secrets.github-pat"],
                "target": "secrets",
            }
        ]
        [secrets] = [row for row in listing["packs"] if row["pack"] == "secrets"]
        assert secrets["overlays"] == [".capy/rules/detector.yaml"]
    else:
        assert (
            "capy ignored project overlay .capy/rules/quiet.yaml (quiet): it disables "
            "secrets.github-pat, and a project may only tighten security; run `capy trust`"
        ) in out
        assert main(["rules", "show", "secrets"]) == 0
        shown = capsys.readouterr().out
        assert "overlays: .capy/rules/detector.yaml" in shown
        assert "capy ignored project overlay .capy/rules/quiet.yaml" in shown
        assert main(["rules", "show", "search"]) == 0
        assert "capy ignored" not in capsys.readouterr().out


def test_doctor_warns_about_each_ignored_overlay_and_config_key(project_dir, ship):
    from capy.doctor import run_doctor
    from capy.doctor.report import Status

    ship("quiet.yaml", "secrets", "disable: [secrets.github-pat]\n")
    (project_dir / ".capy.toml").write_text('key_dir = ".keys"\n')
    report = run_doctor(project_dir)
    warned = {c.name: c for c in report.checks if c.status is Status.WARN}
    assert "ignored .capy/rules/quiet.yaml (quiet): it disables secrets.github-pat" in (
        warned["project overlay"].detail
    )
    assert warned["project config"].detail.startswith(f"ignored {project_dir / '.capy.toml'}")
    assert "changes key_dir" in warned["project config"].detail
    assert "capy trust" in warned["project overlay"].fix
