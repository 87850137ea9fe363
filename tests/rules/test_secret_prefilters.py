"""A detector's keyword prefilter never hides what its pattern finds on its own.

Keywords are a shortcut: a detector runs only where one occurs. A keyword that is a word that
merely tends to stand near a token ("discord", "bot") rather than a literal every token holds
turns the shortcut into a blind spot: the same token pasted alone in a log goes unredacted.
"""

from __future__ import annotations

import pytest

from capy.rules import build_ruleset
from capy.rules.secretscan import compile_detector

# Neutral words around the token, none of them a keyword of any detector.
SURROUNDINGS = ("{token}", "value {token} end", "copied {token}\nnext line")


@pytest.fixture(scope="module")
def secrets():
    return build_ruleset().view("secrets")


def _cases(secrets):
    for detector in secrets.active_detectors:
        for example in detector.examples.match if detector.examples else ():
            match = detector.regex.search(example)
            if match:
                yield detector, match.group(0)


def test_every_match_example_alone_is_still_found(secrets) -> None:
    allow = [rule.pattern for rule in secrets.active_allowlist]
    hidden = []
    for detector, token in _cases(secrets):
        rule = detector.compile(secrets.active_allowlist)
        without_prefilter = compile_detector(
            {
                "id": detector.id,
                "pattern": detector.pattern,
                "entropy": detector.entropy,
                "allowlist": detector.allowlist,
                "use_global_allowlist": detector.use_global_allowlist,
            },
            allow,
        )
        for shape in SURROUNDINGS:
            text = shape.format(token=token)
            if without_prefilter.find(text) and not rule.find(text):
                hidden.append(f"{detector.id}: {text!r}")
    assert not hidden, "keywords hide matches of the pattern:\n" + "\n".join(hidden)


@pytest.mark.parametrize(
    ("text", "rule_id"),
    [
        # No "discord" or "bot" anywhere (the red team's case).
        ("MTa1B2c3D4e5F6g7H8j9K0a1B2.a1B2c3.a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8j9", "discord"),
        ("runner glrtr-a1B2c3D4e5F6g7H8j9K0 registered", "gitlab-token"),
        ("pat-eu2-f0e1d2c3-b4a5-9687-f0e1-d2c3b4a59687", "hubspot-api-key"),
        ('xh -H "Token: a1B2c3D4e5F6g7H8j9K0a1B2" example.com', "api-key-header"),
    ],
)
def test_self_identifying_tokens_are_redacted_anywhere(secrets, text, rule_id) -> None:
    findings = secrets.find_secrets(text)
    assert any(rule_id in finding.rule_id for finding in findings), findings


def test_the_hooks_plain_detectors_find_what_the_view_finds(secrets) -> None:
    """`PlainSecrets` (the hooks' copy, woken by a keyword index) against the view's scan, on
    every example of every detector, alone and all in one text."""
    from capy.masking import PlainSecrets, plain_detectors

    plain = PlainSecrets(plain_detectors(secrets))
    texts = [
        example
        for detector in secrets.active_detectors
        if detector.examples
        for example in (*detector.examples.match, *detector.examples.no_match)
    ]
    for text in [*texts, "\n".join(texts)]:
        expected = [(item.rule_id, item.start, item.end) for item in secrets.find_secrets(text)]
        found = [(item.rule_id, item.start, item.end) for item in plain.find_secrets(text)]
        assert found == expected, text[:80]
