"""Intent replies on a real output printed as one long line that is not JSON records (issue
#17, failure class 1): a JUnit XML report, 17 KB on one line. Its answers sit deep inside the
line, far from the first match, so one byte window around the first match showed none of
them. Everything runs for real: `capy_execute`'s library call on `cat` of the dev-half file of
fixtures/niah-real, a real encrypted store, the reply as the agent reads it.
"""

from __future__ import annotations

from capy.api.line_windows import line_windows
from tests.niah_real_helpers import ask


def test_a_one_line_junit_report_shows_the_skipped_tests_deep_inside_it(project_dir):
    text, intent = ask(project_dir, "junit-six-01", "positive")
    assert all(needle in text for needle in intent.needles), text
    assert len(text.encode("utf-8")) < 4096


def test_windows_go_to_the_rarest_matches_in_line_order():
    text = "a" * 50 + "common" + "b" * 500 + "rare" + "c" * 500 + "common" + "d" * 500 + "rare"
    matches = [(50, 56, 0.1), (556, 560, 2.0), (1060, 1066, 0.1), (1566, 1570, 2.0)]
    shown = line_windows(text, matches, windows=3, window_bytes=60, first_bytes=60)
    assert shown is not None
    # The first match's window (the one window shown before), then the rarest matches'.
    assert shown.count("rare") == 2 and shown.count("common") == 1
    assert shown.startswith("…a") and shown.count("…") == 3  # before, and between windows


def test_one_window_holding_every_match_leaves_the_cut_to_the_caller():
    assert line_windows("x" * 100 + "rare" + "y" * 900, [(100, 104, 1.0)], windows=3,
                        window_bytes=60, first_bytes=60) is None  # fmt: skip
