"""capy.cli.warm_views: a view read back from disk equals the view built from the packs, for
every shipped pack, and an entry is used only while capy's code is unchanged and only from a
file nobody else may write. Real processes with plain views, as a warm start has them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# Builds every pack's plain view from the compiled rules, stores it, and reads it back.
PROGRAM = """
import json, sys
from capy.rules.views import plain
plain.enable()
from capy.cli.warm_views import load_view, store_view
from capy.rules.viewing import build_view

packs = json.loads(open(sys.argv[1], encoding="utf-8").read())["packs"]
for name in sorted(packs):
    again = load_view("k" * 32, name)
    if sys.argv[2] == "store":
        built = build_view(name, packs[name]["data"])
        store_view("k" * 32, name, built)
        again = load_view("k" * 32, name)
        assert type(again) is type(built) and again == built, name
        assert again.__dict__.keys() == built.__dict__.keys(), name
    print(name, again is not None)
"""


def run(rules_cache_file: Path, mode: str) -> dict[str, bool]:
    from capy.watched import data_root

    Path(data_root()).mkdir(parents=True, exist_ok=True)  # caches go where capy keeps data
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(rules_cache_file), mode],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {
        name: found == "True"
        for name, found in (line.split() for line in done.stdout.split("\n") if line)
    }


def entries() -> list[Path]:
    from capy.watched import cache_dir

    return sorted(Path(cache_dir("views")).glob("*.pickle"))


def test_every_pack_view_reads_back_equal(rules_cache_file: Path) -> None:
    packs = json.loads(rules_cache_file.read_text(encoding="utf-8"))["packs"]
    assert run(rules_cache_file, "store") == dict.fromkeys(packs, True)
    assert len(entries()) == len(packs)
    assert all(path.stat().st_mode & 0o777 == 0o600 for path in entries())
    assert run(rules_cache_file, "load") == dict.fromkeys(packs, True)


def test_an_entry_written_for_other_code_or_writable_by_others_is_not_read(
    rules_cache_file: Path,
) -> None:
    import pickle

    run(rules_cache_file, "store")
    first, second = entries()[:2]
    entry = pickle.loads(first.read_bytes())
    entry["watch"][0][1] = [0, 0]  # a capy module edited since the entry was written
    first.write_bytes(pickle.dumps(entry))
    second.chmod(0o622)
    found = run(rules_cache_file, "load")
    names = {path: path.stem.split("-", 1)[1] for path in (first, second)}
    assert not found[names[first]] and not found[names[second]]
    assert sum(found.values()) == len(found) - 2
