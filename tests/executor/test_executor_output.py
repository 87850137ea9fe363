"""Head/tail truncation at line boundaries, and decoding of what programs print."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from capy.executor.output import decode, returned_text, split_head_tail
from capy.rules import build_ruleset

MARKER = "\n... [{omitted_bytes} bytes, {omitted_lines} lines omitted] ...\n"
# The shipped pack's output limits with small sizes, so a few lines are "long"; every other
# field (the intent reply's shape, the relevance floor...) stays the pack's own.
LIMITS = (
    build_ruleset()
    .view("executor")
    .limits.output.model_copy(
        update={
            "max_returned_bytes": 100,
            "head_ratio": 0.6,
            "cut_at_line_boundary": True,
            "truncation_marker": MARKER,
            "hard_cap_bytes": 10_000,
            "intent_threshold_bytes": 50,
            "index_threshold_bytes": 80,
        }
    )
)


def test_short_output_is_returned_whole() -> None:
    assert split_head_tail(b"x" * 100, LIMITS) is None
    assert returned_text(b"hello\n", LIMITS) == ("hello\n", 0)


def test_long_output_keeps_whole_lines_from_both_ends(snapshot) -> None:
    data = b"".join(f"line {number:03}\n".encode() for number in range(100))
    text, cut = returned_text(data, LIMITS)
    assert text == snapshot
    assert cut > 0
    assert text.startswith("line 000\n")
    assert text.endswith("line 099\n")


def test_a_single_huge_line_is_cut_mid_line() -> None:
    cut = split_head_tail(b"a" * 1000, LIMITS)
    assert cut is not None
    assert len(cut.head) == 60 and len(cut.tail) == 40
    assert cut.omitted_bytes == 900


def test_multibyte_characters_are_never_split() -> None:
    data = "é" * 500  # two bytes each: the 60-byte head ends between whole characters
    text, _ = returned_text(data.encode(), LIMITS)
    assert "\ufffd" not in text


def test_decode_flags_invalid_utf8_and_binary() -> None:
    assert decode(b"plain\n") == decode(b"plain\n")
    assert not decode(b"plain").invalid_utf8
    bad = decode(b"\xff\xfeabc")
    assert bad.invalid_utf8 and bad.binary and bad.text.endswith("abc")
    nul = decode(b"a\0b")
    assert nul.binary and not nul.invalid_utf8


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(st.binary(max_size=80), st.text(max_size=40).map(str.encode)), max_size=30
    ).map(lambda parts: b"\n".join(parts)),
    st.integers(min_value=1, max_value=200),
    st.floats(min_value=0.0, max_value=1.0),
)
def test_split_is_lossless_and_bounded(data: bytes, budget: int, ratio: float) -> None:
    limits = LIMITS.model_copy(update={"max_returned_bytes": budget, "head_ratio": ratio})
    cut = split_head_tail(data, limits)
    if cut is None:
        assert len(data) <= budget
        return
    assert cut.head + data[len(cut.head) : len(data) - len(cut.tail)] + cut.tail == data
    assert len(cut.head) <= limits.head_bytes
    assert len(cut.tail) <= limits.tail_bytes
    assert cut.omitted_bytes == len(data) - len(cut.head) - len(cut.tail)
    assert cut.omitted_bytes > 0


def test_prepare_sees_whole_text_only_when_it_is_cut() -> None:
    """The caller's rewrite (its redaction) runs before the cut, on the whole text, and only
    when there is a cut; the marker then counts what was cut from the rewritten text."""
    seen: list[str] = []

    def masked(text: str) -> str:
        seen.append(text)
        return text.replace("SECRET-START\nSECRET-END\n", "[masked]\n")

    assert returned_text(b"short\n", LIMITS, prepare=masked) == ("short\n", 0)
    assert seen == []
    data = b"a\n" * 30 + b"SECRET-START\nSECRET-END\n" + b"b\n" * 30
    text, cut = returned_text(data, LIMITS, prepare=masked)
    assert seen == [data.decode()] and "SECRET" not in text
    expected = split_head_tail(masked(data.decode()).encode(), LIMITS)
    assert cut == expected.omitted_bytes
    marker = LIMITS.marker(expected.omitted_bytes, expected.omitted_lines)
    assert text == expected.head.decode() + marker + expected.tail.decode()
