"""`capy bench hostile`: a small slice of each family, run for real, to show the harness works.

Each family carries a control case that must come out bad (a survivor started outside capy, a
secret with nothing in between, a traceback, an "internal error" and a hang, control sequences
printed by a plain process, a loopback connection made without the guard, a store damaged on
purpose, a line slipped into a spawner of the old kind): a harness that cannot see a bad
outcome proves nothing, so those are asserted here, always. Every bad count of capy itself
must be 0.
"""

from __future__ import annotations

import json

import pytest

from capy.bench import (
    hostile_escape,
    hostile_input_cases,
    hostile_inputs,
    hostile_reach,
    hostile_secrets,
    hostile_spawner,
    hostile_ssrf,
    hostile_terminal,
)
from capy.bench.hostile_common import scratch


@pytest.fixture
def place():
    with scratch() as folder:
        yield folder


def expect_zero(*counts: int | None, bad: object = None) -> None:
    """Every count 0; on failure, the report's own list of what went wrong and why."""
    assert list(counts) == [0] * len(counts), bad


def _attempts(*names: str) -> tuple[hostile_escape.Attempt, ...]:
    return tuple(attempt for attempt in hostile_escape.ATTEMPTS if attempt.name in names)


def test_escape_slice_sees_a_survivor_and_kills_every_one(place) -> None:
    picked = _attempts("sh: setsid + env -i", "python: forged marker + setsid")
    report = hostile_escape.run(
        place, quick=True, selection=[("library", "returns", picked), ("mcp", "returns", picked)]
    )
    assert report["control_seen"] is True
    assert report["tried"] == 4 and report["never_started"] == 0, report
    for row in report["rows"]:
        assert row["survived_exit"] <= row["tried"]
    # Whatever survived, nothing tagged is left running afterwards.
    for pidfile in hostile_escape.pid_folder(place).glob("*.pid"):
        assert not hostile_escape.tagged_alive(int(pidfile.read_text()), hostile_escape.TAG), (
            pidfile
        )
    expect_zero(report["survived"])


def test_cancelled_mcp_call_is_counted_when_its_child_lives_on(place) -> None:
    """notifications/cancelled through the SDK client, then a grace: a live child counts."""
    picked = _attempts("sh: background &")
    report = hostile_escape.run(place, quick=True, selection=[("mcp", "cancelled", picked)])
    assert report["control_seen"] is True
    assert report["tried"] == 1 and report["never_started"] == 0, report
    assert [row["mode"] for row in report["rows"]] == ["cancelled"]
    for pidfile in hostile_escape.pid_folder(place).glob("*.pid"):
        assert not hostile_escape.tagged_alive(int(pidfile.read_text()), hostile_escape.TAG)
    expect_zero(report["survived"])


def test_secret_plants_are_fresh_and_still_detected() -> None:
    from capy.security.redaction import redact

    plants = hostile_secrets.fresh_secrets(5)
    assert len({plant.rule_id for plant in plants}) == 5
    text = hostile_secrets.planted_text(plants)
    masked = redact(text).text
    assert all(plant.secret in text and plant.secret not in masked for plant in plants)
    again = {plant.secret for plant in hostile_secrets.fresh_secrets(5)}
    assert again.isdisjoint(plant.secret for plant in plants)  # new random bodies every run


def test_secrets_slice_counts_what_comes_back_raw(place) -> None:
    report = hostile_secrets.run(place, quick=True, kinds=2)
    assert report["control_seen"] is True
    assert report["unreached"] == [], report  # every reply held what its tool was given
    rows = {row["where"]: row for row in report["rows"]}
    assert rows["environment (env)"]["planted"] == 2
    assert {"capy_execute", "capy_fetch_and_index (preview)", "capy vault show"} <= set(rows)
    expect_zero(report["returned_raw"])


def test_inputs_slice_counts_tracebacks_errors_and_hangs(place) -> None:
    keep = {"capy redact /dev/zero", "--db naming a folder: search"}
    report = hostile_inputs.run(
        place,
        quick=True,
        keep=lambda name: name in keep or name.startswith("malformed JSON to PreToolUse"),
        mcp_tools=frozenset({"capy_index"}),
    )
    assert report["control_seen"] == {"traceback": True, "hang": True, "internal_error": True}
    groups = {row["group"]: row["tried"] for row in report["rows"]}
    assert groups["paths"] == 1 and groups["stores"] == 1 and groups["hooks"] == 3
    assert groups["MCP wrong types"] >= 4  # no arguments, an unknown one, each parameter
    expect_zero(report["tracebacks"], report["internal_errors"], report["hangs"], bad=report["bad"])


def test_inputs_slice_counts_a_full_disk_and_a_deep_sweep(place) -> None:
    keep = {"full disk: index", "sweep: a line nested 100,000 deep"}
    report = hostile_inputs.run(place, quick=True, keep=keep.__contains__, mcp_tools=frozenset())
    groups = {row["group"]: row["tried"] for row in report["rows"]}
    assert groups["transcripts"] == 1
    if report["skipped"]:  # no root or no mount here: said so, not silently passed
        assert report["skipped"][0].startswith("full disk: skipped")
    else:
        assert groups["stores"] == 1
    expect_zero(report["tracebacks"], report["internal_errors"], report["hangs"], bad=report["bad"])
    expect_zero(report["work_lost"])


def test_hang_deadlines_stretch_with_a_slow_cold_start_only() -> None:
    """A calm machine keeps 15 s (8 s for a hook) and 60 s; a slow cold start
    stretches them, so a loaded machine does not turn a slow start into a hang."""
    scaled, hook = hostile_input_cases.scaled_deadline, hostile_input_cases.hook_deadline
    assert (scaled(True, 1.0), scaled(False, 1.0)) == (15.0, 60.0)
    assert hook(scaled(True, 1.0), True) == 8.0
    ratio = hostile_input_cases.HANG_RATIO
    assert (scaled(True, 10.0), scaled(False, 20.0)) == (10.0 * ratio, 20.0 * ratio)
    assert hook(scaled(True, 10.0), True) > 8.0


def test_terminal_slice_counts_sequences_printed_raw(place) -> None:
    report = hostile_terminal.run(place, quick=True, where=("capy execute (command output)",))
    assert report["control_seen"] is True
    assert report["unreached"] == [] and report["planted"] == len(hostile_terminal.SEQUENCES)
    assert report["rows"][0]["seen"] == len(hostile_terminal.SEQUENCES)
    expect_zero(report["printed_raw"])


def test_terminal_sequences_are_seen_only_raw() -> None:
    raw = "\n".join(hostile_terminal.planted_lines())
    assert len(hostile_terminal.printed_raw(raw)) == len(hostile_terminal.SEQUENCES)
    shown = raw.encode("unicode_escape").decode("ascii")  # what a neutralised print looks like
    assert hostile_terminal.printed_raw(shown) == []
    assert hostile_terminal.lines_seen(shown) == len(hostile_terminal.SEQUENCES)


def test_hostile_overlays_are_what_they_claim() -> None:
    from ruamel.yaml import YAML

    laughs = YAML(typ="safe").load(hostile_input_cases.billion_laughs())
    assert laughs["extends"] == "chunking" and "laughs" in laughs["patch"]
    assert len(hostile_input_cases.comment_flood(1)) > 1_000_000
    assert "(a+)+$" in hostile_input_cases.backtracking_detector()


def test_ssrf_slice_reaches_only_the_control(place) -> None:
    forms = [
        ("derived", "http://2130706433/latest/meta-data/"),
        ("derived", "http://[::ffff:127.0.0.1]/"),
        (
            "redirect",
            f"http://{hostile_ssrf.PUBLIC_NAME}/redirect?code=302&to=http%3A%2F%2F169.254.169.254%2F",
        ),
    ]
    report = hostile_ssrf.run(place, quick=True, forms=forms)
    assert report["control_seen"] is True, report
    assert report["tried"] == 6 and report.get("error") is None  # default rules, then the overlay
    assert report["overlay"]["tried"] == 3
    expect_zero(report["reached"])


def test_ssrf_spellings_decode_to_the_address() -> None:
    import socket

    for spelling in hostile_ssrf.spellings("127.0.0.1")[:6]:
        info = socket.getaddrinfo(spelling, 80, 0, socket.SOCK_STREAM, 0, socket.AI_NUMERICHOST)
        assert info[0][4][0] == "127.0.0.1", spelling


def test_spawner_family_finds_the_victims_spawner_and_nothing_gets_in(place) -> None:
    from capy.executor import cgroups

    if not cgroups.hierarchies():
        pytest.skip("no usable cgroup hierarchy on this machine, so no spawner is kept ready")
    report = hostile_spawner.run(place, quick=True)
    assert report["control_seen"] is True, report
    assert not report["errors"], report["errors"]
    rows = {(row["channel"], row["whose"]): row for row in report["rows"]}
    if _isolated():  # from inside a call no spawner can be seen at all
        assert rows["command", "other"]["attempts"] == 0, report
    else:  # the attacker found another server's waiting spawner: the zero below means something
        assert rows["command", "other"]["attempts"] > 0, report
    assert report["victim_calls"] == hostile_spawner.VICTIM_CALLS + 1
    expect_zero(report["got_through"], len(report["wrong_outputs"]), bad=report)


def _isolated() -> bool:
    from capy.executor import isolation
    from capy.rules import build_ruleset

    rules = build_ruleset(include_shipped=True).view("executor").isolation
    return isolation.plan(rules) is not None


def test_reach_family_gets_nowhere_where_the_plain_control_gets_everywhere(place) -> None:
    """Each channel's control (a plain process of the same user) got through; a call did not."""
    if not _isolated():
        pytest.skip("calls are not isolated on this machine")
    report = hostile_reach.run(place, quick=True)
    assert not report["errors"], report["errors"]
    assert report["control_seen"] is True, report
    channels = {row["channel"] for row in report["rows"]}
    assert channels == set(hostile_reach.CHANNELS), report
    expect_zero(report["got_through"], bad=report)


def test_cli_prints_the_figures_as_json(capsys) -> None:
    """The crash slice, through the command: one kill -9 run and the damaged control store."""
    from capy.cli import main

    code = main(["bench", "hostile", "--only", "crash", "--runs", "1", "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    report = json.loads(out)
    assert [goal["goal"] for goal in report["goals"]] == ["kill -9 runs that damaged the store: 0"]
    assert report["crash"]["control_seen"] is True
    assert report["crash"]["runs"] == 1
    expect_zero(report["crash"]["damaged"])


def test_cli_refuses_an_unknown_family(capsys) -> None:
    from capy.cli import main

    assert main(["bench", "hostile", "--only", "everything"]) == 2
    said = capsys.readouterr().err
    assert "--only takes escape, secrets, inputs, terminal, ssrf, crash, spawner" in said


def test_a_goal_is_void_where_its_familys_control_was_not_seen() -> None:
    from capy.bench.hostile import goals

    # Probes that failed on this machine count 0 got through and 0 for the control alike.
    blind = {"got_through": 0, "control_seen": {"plain": True, "cgroup": False}}
    (row,) = goals({"reach": blind})
    assert not row["met"] and "void" in str(row["value"])
    (row,) = goals({"reach": {**blind, "control_seen": {"plain": True, "cgroup": True}}})
    assert row["met"] and row["value"] == 0
