"""Preparing content for storage: decoding, binary refusal, redaction and the size cap."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capy.rules.views.retention import OversizePolicy
from capy.store.content import (
    BINARY_SAMPLE_BYTES,
    ContentError,
    decode_content,
    prepare_content,
    redact_text,
)

FAKE_PAT = "ghp_a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"


def prepare(rules, content, label="src", **size):
    cap = rules.view("retention").size.model_copy(update=size)
    return prepare_content(content, label=label, secrets=rules.view("secrets"), size=cap)


def test_bytes_are_decoded_as_utf8_with_replacement() -> None:
    assert decode_content("héllo ✓".encode(), label="x") == "héllo ✓"
    assert decode_content(b"caf\xe9 au lait, ol\xe9", label="x") == "caf\ufffd au lait, ol\ufffd"


@pytest.mark.parametrize(
    "content",
    [
        b"PK\x03\x04\x14\x00\x00\x00",  # a zip header: NUL bytes
        "text with a \x00 NUL",
        bytes(range(128, 256)) * 40,  # undecodable throughout
        "".join(chr(c) for c in range(1, 9)) * 200,  # control characters throughout
    ],
)
def test_binary_content_is_refused_naming_the_label(content) -> None:
    with pytest.raises(ContentError, match=r"refusing to index 'image\.png': .*binary"):
        decode_content(content, label="image.png")


def test_a_nul_past_the_sample_is_text() -> None:
    text = "a" * BINARY_SAMPLE_BYTES + "\x00"
    assert decode_content(text, label="x") == text


def test_ansi_colours_and_tabs_are_text() -> None:
    text = "\x1b[31mFAILED\x1b[0m\ttests/test_x.py\r\n" * 50
    assert decode_content(text, label="x") == text


def test_lone_surrogates_cannot_reach_the_store() -> None:
    text = b"a line of text with two stray bytes \xff\xfe".decode("utf-8", "surrogateescape")
    assert decode_content(text, label="x").encode("utf-8")


def test_neither_text_nor_bytes_is_a_clear_error() -> None:
    with pytest.raises(ContentError, match="must be text or bytes, not int"):
        decode_content(42, label="x")  # type: ignore[arg-type]


@pytest.mark.parametrize("content", ["", "   \n\t ", b"", b"\n\n"])
def test_empty_content_is_refused(rules, content) -> None:
    with pytest.raises(ContentError, match="nothing to index for 'src': the content is empty"):
        prepare(rules, content)


def test_secrets_are_redacted_before_hashing(rules) -> None:
    prepared = prepare(rules, f"token = {FAKE_PAT}\n")
    assert FAKE_PAT not in prepared.text
    assert "[REDACTED:secrets.github-pat]" in prepared.text
    assert prepared.redactions == {"secrets.github-pat": 1}
    assert prepared.content_hash == hashlib.sha256(prepared.text.encode()).hexdigest()
    assert prepared.size == len(prepared.text.encode())


def test_redacting_redacted_text_changes_nothing(rules) -> None:
    secrets = rules.view("secrets")
    for detector in secrets.active_detectors:
        for example in detector.examples.match if detector.examples else ():
            once, _ = redact_text(example, secrets)
            assert redact_text(once, secrets)[0] == once, detector.id


def test_the_mask_names_the_full_rule_id_not_the_secret(rules) -> None:
    text = "token ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
    redacted, counts = redact_text(text, rules.view("secrets"))
    rule_id = next(iter(counts))
    assert rule_id.startswith("secrets.")
    assert redacted == f"token [REDACTED:{rule_id}]"


REJECT = {"max_source_bytes": 4096, "on_oversize": OversizePolicy.REJECT}


def test_oversize_is_refused_when_the_pack_says_reject(rules) -> None:
    assert len(prepare(rules, "x" * 4096, **REJECT).text) == 4096
    with pytest.raises(ContentError, match=r"'big.log': 4,097 bytes is over the 4,096-byte cap"):
        prepare(rules, "x" * 4097, label="big.log", **REJECT)


def test_the_cap_applies_after_redaction(rules) -> None:
    # Over the cap as given, within it once the 40-character token becomes a shorter mask.
    content = "a" * 4060 + " " + FAKE_PAT
    assert len(content) > 4096
    assert prepare(rules, content, **REJECT).size <= 4096


def test_truncate_middle_keeps_head_and_tail(rules) -> None:
    content = "HEAD " + "é" * 10_000 + " TAIL"
    prepared = prepare(
        rules, content, max_source_bytes=4096, on_oversize=OversizePolicy.TRUNCATE_MIDDLE
    )
    assert prepared.size <= 4096
    assert prepared.text.startswith("HEAD ") and prepared.text.endswith(" TAIL")
    assert "bytes omitted to fit the 4,096-byte source cap" in prepared.text
    omitted = len(content.encode()) - len(prepared.text.encode())
    assert 0 < omitted < len(content.encode())


def test_truncate_tail_keeps_the_head(rules) -> None:
    prepared = prepare(
        rules,
        "HEAD " + "x" * 10_000 + " TAIL",
        max_source_bytes=4096,
        on_oversize=OversizePolicy.TRUNCATE_TAIL,
    )
    assert prepared.size <= 4096
    assert prepared.text.startswith("HEAD ") and "TAIL" not in prepared.text


def test_the_shipped_cap_truncates_the_middle(rules) -> None:
    size = rules.view("retention").size
    prepared = prepare(rules, "start\n" + "y" * (size.max_source_bytes + 10) + "\nend")
    assert prepared.size <= size.max_source_bytes
    assert prepared.text.startswith("start\n") and prepared.text.endswith("\nend")


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.one_of(st.binary(max_size=600), st.text(max_size=600)))
def test_any_input_prepares_or_fails_clearly(rules, content) -> None:
    try:
        prepared = prepare(rules, content)
    except ContentError as error:
        assert "src" in error.message
    else:
        assert prepared.text.strip()
        assert prepared.text.encode("utf-8")
