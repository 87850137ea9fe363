"""Terminal controls in shown text become visible escapes; everything else stays as it was."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capy.security.controls import neutralise_controls

# Every code point a terminal acts on, and where it comes from.
CONTROL_POINTS = [
    *[chr(code) for code in range(0x00, 0x20) if chr(code) not in "\t\n\r"],  # C0
    "\x7f",  # DEL
    *[chr(code) for code in range(0x80, 0xA0)],  # C1: CSI, OSC, DCS in one character
    *"\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",  # bidi
]


@pytest.mark.parametrize("char", CONTROL_POINTS, ids=lambda char: f"U+{ord(char):04X}")
def test_each_control_becomes_its_escape(char: str) -> None:
    assert neutralise_controls(f"a{char}b") == f"a\\u{ord(char):04x}b"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b]52;c;aGVsbG8=\x07", "\\u001b]52;c;aGVsbG8=\\u0007"),  # clipboard write
        ("\x1b]0;owned\x1b\\", "\\u001b]0;owned\\u001b\\"),  # window title, ST-terminated
        ("\x1b[2J\x1b[H", "\\u001b[2J\\u001b[H"),  # clear the screen, cursor home
        ("ok\x08\x08rm", "ok\\u0008\\u0008rm"),  # overstrike
        ("safe\rrm -rf ~", "safe\nrm -rf ~"),  # a lone CR would overwrite the line
        ("line\r\nnext\r\n", "line\r\nnext\r\n"),  # CR LF is a line ending
        ("tab\tand\nnewline", "tab\tand\nnewline"),
        ("ünïcödé ✓ 日本", "ünïcödé ✓ 日本"),
    ],
)
def test_sequences_lose_their_power_and_nothing_else_changes(raw: str, shown: str) -> None:
    assert neutralise_controls(raw) == shown


@given(st.text())
def test_no_control_survives_and_the_escape_is_stable(text: str) -> None:
    shown = neutralise_controls(text)
    assert not any(char in shown for char in CONTROL_POINTS)
    assert "\r" not in shown.replace("\r\n", "")
    assert neutralise_controls(shown) == shown  # escapes are plain text


def test_escapes_are_valid_inside_json_strings() -> None:
    shown = neutralise_controls(json.dumps({"k": "a\x9bb\u202ec"}, ensure_ascii=False))
    assert json.loads(shown) == {"k": "a\x9bb\u202ec"}


def test_a_megabyte_without_controls_costs_a_few_milliseconds() -> None:
    text = "2026-11-01T10:00:00Z INFO request handled in 12 ms\n" * 20_000
    start = time.process_time()
    for _ in range(5):
        assert neutralise_controls(text) is text
    assert (time.process_time() - start) / 5 < 0.05
