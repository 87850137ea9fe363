"""The compiled-rules key is kept per process only while no file it covers has changed."""

from __future__ import annotations

import os

from capy.rules.cache import cache_key


def test_the_key_follows_an_overlay_edit_of_the_same_size_and_a_chmod(user_rules_dir):
    overlay = user_rules_dir / "team.yaml"
    overlay.write_text("pack: team\nlimit: 1\n", encoding="utf-8")
    candidates = [(overlay, "user")]
    first = cache_key(candidates)
    assert cache_key(candidates) == first
    overlay.write_text("pack: team\nlimit: 2\n", encoding="utf-8")  # same size, new bytes
    second = cache_key(candidates)
    assert second != first
    os.chmod(overlay, 0o000)
    unreadable = cache_key(candidates)
    os.chmod(overlay, 0o644)
    if os.geteuid() != 0:  # root reads the file whatever its mode
        assert unreadable != second
    assert cache_key(candidates) == second


def test_a_removed_overlay_changes_the_key(user_rules_dir):
    overlay = user_rules_dir / "team.yaml"
    overlay.write_text("pack: team\n", encoding="utf-8")
    present = cache_key([(overlay, "user")])
    overlay.unlink()
    assert cache_key([(overlay, "user")]) != present
