"""Words of one simple command: quotes removed as a shell removes them, positions kept."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capy.security.shellwords import LazyWords, is_assignment, shell_words


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("timeout 5 rm -rf /", ["timeout", "5", "rm", "-rf", "/"]),
        ("git commit -m \"a 'b' c\"", ["git", "commit", "-m", "a 'b' c"]),
        ("echo 'a \"b\"' c\\ d", ["echo", 'a "b"', "c d"]),
        ('echo "\\$HOME \\q"', ["echo", "$HOME \\q"]),  # only some escapes apply in "..."
        ("printf $'a\\tb'", ["printf", "a\tb"]),
        ("echo $(date +%s) `id -u`", ["echo", "$(date +%s)", "`id -u`"]),
        ('echo "$(printf "x y")"', ["echo", '$(printf "x y")']),
        ("  spaced\t\nwords  ", ["spaced", "words"]),
    ],
)
def test_words_and_their_values(text, values):
    words = shell_words(text)
    assert words is not None
    assert [word.value for word in words] == values
    # Each word's position covers its text as written.
    assert all(text[word.start : word.end].strip() for word in words)


def test_positions_hand_back_the_text_as_written():
    text = 'timeout 5 git commit -m "fix: x"'
    words = shell_words(text)
    assert text[words[2].start :] == 'git commit -m "fix: x"'


@pytest.mark.parametrize("text", ["echo 'open", 'echo "open', "echo $(date", "echo `id", "$'x"])
def test_unterminated_quoting_is_none(text):
    assert shell_words(text) is None


def test_lazy_words_scan_only_what_is_asked():
    words = LazyWords("timeout 5 echo " + "word " * 1000 + "'open")
    assert words.get(2).value == "echo"
    assert not words.broken  # the unterminated quote lies beyond what was read
    words.rest(0)
    assert words.broken


@pytest.mark.parametrize(
    ("word", "expected"),
    [("FOO=1", True), ("A_B+=x", True), ("arr[2]=v", True), ("=x", False), ("1A=x", False)],
)
def test_assignments(word, expected):
    assert is_assignment(word) is expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab '\"\\$()`=\t\n-")), max_size=30))
def test_agrees_with_shlex_where_both_apply(text):
    words = shell_words(text)
    if any(char in text for char in "$`") or "\\\n" in text:
        return  # substitutions stay whole and line continuations vanish; shlex knows neither
    try:
        expected = shlex.split(text, posix=True)
    except ValueError:
        assert words is None
        return
    assert words is not None and [word.value for word in words] == expected
