"""Secret redaction: every secret the secrets pack finds becomes `[REDACTED:<rule id>]`.

One engine: the pack view's `find_secrets` (keywords, regexes, entropy floors, allowlists, with
overlapping finds merged). This module only splices the masks in and counts them, so that what
capy stores, indexes, returns and prints (`capy redact`) is redacted the same way everywhere.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

# MASK and mask_for are re-exported: callers have long imported them from here.
from capy.masking import MASK as MASK
from capy.masking import mask_for as mask_for
from capy.masking import splice_masks

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from capy.rules.secretscan import SecretFinding
    from capy.rules.views.secrets import SecretsPack


@dataclass(frozen=True)
class Redaction:
    """A text with its secrets masked, and what was found."""

    text: str
    findings: tuple[SecretFinding, ...]

    @property
    def counts(self) -> dict[str, int]:
        """How many secrets each rule redacted, most first (then by id)."""
        counts = Counter(finding.rule_id for finding in self.findings)
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

    @property
    def changed(self) -> bool:
        return bool(self.findings)


def load_secrets_view(project_dir: Path | None = None) -> SecretsPack:
    from capy.rules import load_rules

    return load_rules(project_dir).view("secrets")


@cache
def shipped_secrets_view() -> SecretsPack:
    from capy.rules import build_ruleset

    return build_ruleset().view("secrets")


def secrets_for_output(load: Callable[[], SecretsPack]) -> SecretsPack:
    """The secrets pack `load` gives (the one in force), or the shipped one when the packs in
    force have errors: a broken overlay must neither let output through unredacted nor
    silence the report that tells the user about it (`capy doctor`)."""
    from capy.rules import RulesError

    try:
        return load()
    except RulesError:
        return shipped_secrets_view()


def redact(
    text: str, *, secrets: SecretsPack | None = None, project_dir: Path | None = None
) -> Redaction:
    """Mask every secret in `text` with its rule id; the secrets themselves go nowhere else."""
    secrets = secrets if secrets is not None else load_secrets_view(project_dir)
    findings = secrets.find_secrets(text)
    if not findings:
        return Redaction(text, ())
    return Redaction(splice_masks(text, findings), tuple(findings))


def redact_text(text: str, *, secrets: SecretsPack | None = None) -> str:
    """Just the redacted text, for callers that need no report."""
    return redact(text, secrets=secrets).text


def redact_value(value: Any, *, secrets: SecretsPack) -> Any:
    """`value` with every string inside it (dict keys and values, list and tuple items)
    redacted; other values unchanged. For structured replies and JSON output."""
    return _redact_value(value, secrets, {})


def _redact_value(value: Any, secrets: SecretsPack, seen: dict[str, str]) -> Any:
    # `seen`: a structured reply repeats its keys (and often values) in every item; each
    # distinct string is scanned once.
    if isinstance(value, str):
        if value not in seen:
            seen[value] = redact(value, secrets=secrets).text
        return seen[value]
    if isinstance(value, dict):
        return {
            _redact_value(key, secrets, seen): _redact_value(item, secrets, seen)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return type(value)(_redact_value(item, secrets, seen) for item in value)
    return value


# The one setting that turns redaction of what capy shows off (what it stores stays redacted).
OPT_OUT_SETTING = "redaction.replies"


def not_redacted_note(why: str = f"the setting {OPT_OUT_SETTING} is off") -> str:
    return f"Secrets were NOT redacted here ({why}): any secret in this output is shown as found."


def redaction_wanted(project_dir: Path | None = None) -> bool:
    """Whether what capy shows is redacted: yes unless the user's settings say otherwise, and
    yes when the settings cannot be read (a guard that cannot decide fails closed)."""
    from capy.config import load_settings

    try:
        return load_settings(project_dir or Path.cwd()).settings.redaction.replies
    except Exception:
        return True
