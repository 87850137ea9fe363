"""The on-disk compiled-rules cache: written once, read by fresh processes, never trusted."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from capy.rules import load_rules
from capy.rules.cache import cache_key, cache_path
from capy.rules.ruleset import overlay_candidates

READ_CHUNK_SIZE = (
    "from capy.rules import load_rules; "
    "print(load_rules().pack('chunking').data['max_chunk_bytes'])"
)


def _fresh_process() -> str:
    done = subprocess.run(
        [sys.executable, "-c", READ_CHUNK_SIZE],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        check=True,
        timeout=120,
    )
    return done.stdout.strip()


def _current_cache_file():
    return cache_path(cache_key(overlay_candidates()))


def test_a_fresh_process_reads_the_cache_written_by_another():
    load_rules()
    path = _current_cache_file()
    assert path.is_file()
    payload = json.loads(path.read_text(encoding="utf-8"))
    # Tamper with the cached value: a fresh process that reports it has read the cache,
    # not re-validated the packs.
    payload["packs"]["chunking"]["data"]["max_chunk_bytes"] = 1234
    path.write_text(json.dumps(payload), encoding="utf-8")
    assert _fresh_process() == "1234"


def test_an_unreadable_cache_file_is_ignored_and_rebuilt():
    load_rules()
    path = _current_cache_file()
    path.write_text("{not json", encoding="utf-8")
    assert _fresh_process() == "4096"
    assert json.loads(path.read_text(encoding="utf-8"))["key"] == cache_key(overlay_candidates())


def test_an_edited_overlay_changes_the_key(user_rules_dir):
    before = cache_key(overlay_candidates())
    (user_rules_dir / "a.yaml").write_text(
        "pack: mine\nschema: overlay.v1\nversion: 1.0.0\n"
        "description: Smaller chunks for the cache test.\n"
        'requires: ">=0.1"\nextends: chunking\npatch:\n  max_chunk_bytes: 2000\n',
        encoding="utf-8",
    )
    after = cache_key(overlay_candidates())
    assert before != after
    assert _fresh_process() == "2000"


def test_a_broken_overlay_is_never_cached(user_rules_dir):
    (user_rules_dir / "a.yaml").write_text("pack: [broken\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "capy", "rules", "list"],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=120,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert not _current_cache_file().exists()
