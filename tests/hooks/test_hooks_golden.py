"""Golden payloads for every event of every platform, answered in the platform's own shape."""

from __future__ import annotations

import shutil

import pytest
from hooks_helpers import load_payload, native_event, payload_files, run_hook_process, shown

from capy.hooks import handle

ALL = payload_files()
# One process per platform and kind of answer: what installers register is what runs here.
PROCESS_SUBSET = [
    path
    for path in ALL
    if any(mark in path.stem for mark in ("curl", "webfetch", "web-fetch", "fetch-webpage"))
    or path.stem in ("SessionStart-startup", "agentSpawn")
]


@pytest.mark.parametrize("path", ALL, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_golden_payload(path, project, snapshot):
    outcome = handle(native_event(path), load_payload(path, project), platform=path.parent.name)
    assert outcome.exit_code in (0, 2)
    assert shown(outcome, project) == snapshot


@pytest.mark.parametrize("path", PROCESS_SUBSET, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_real_process_gives_the_library_answer(path, project):
    payload = load_payload(path, project)
    process = run_hook_process(native_event(path), payload, path.parent.name, project)
    from capy.config.paths import data_dir

    shutil.rmtree(data_dir() / "hooks", ignore_errors=True)  # the library run starts afresh
    expected = handle(native_event(path), payload, platform=path.parent.name)
    assert shown(process, project) == shown(expected, project)
    assert process.stdout.strip() or process.returncode == 2, "each of these gets an answer"


def test_every_platform_and_event_has_a_golden_payload():
    import json

    from capy.rules import load_rules

    platforms = load_rules().pack("platforms").data["platforms"]
    have = {(path.parent.name, native_event(path)) for path in ALL}
    missing = [
        (entry["key"], native)
        for entry in platforms
        for native in entry["events"].values()
        if (entry["key"], native) not in have
    ]
    assert missing == [], json.dumps(missing)
