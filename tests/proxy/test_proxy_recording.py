"""What `capy proxy` records: each message of a conversation once, however often the client
resends the history, the replies (JSON and streamed) too, in the real SQLCipher log with a
chain that verifies; and never the API key, in the log, the spool or the logs."""

from __future__ import annotations

import fcntl
import os
import time

from capy.bench.chat_upstream import reply_text
from capy.capsules import open_capsules
from capy.capsules.spool import project_spool_path
from capy.rules import load_rules
from tests.proxy.conftest import API_KEY, client

SYSTEM = {"role": "system", "content": "You are a careful coding assistant."}


def _proxy_capsules(project):
    with open_capsules(project_dir=project) as store:
        found = [capsule for _, capsule in store.backend.scan() if capsule.source == "proxy"]
        reports = store.verify()
    return found, reports


def test_a_conversation_is_recorded_once_per_message_however_often_it_is_resent(
    upstream, start_proxy, warm_project
):
    url, seen = upstream
    proxy = start_proxy(url)
    chat = client(proxy).chat.completions
    messages = [SYSTEM, {"role": "user", "content": "Why does test_parser fail?"}]
    first = chat.create(model="json", messages=messages)
    # The client hands the reply back as the SDK's own object (with fields of its own).
    messages += [first.choices[0].message, {"role": "user", "content": "Fix it then."}]
    second = chat.create(model="json", messages=messages)
    messages += [
        {"role": "assistant", "content": second.choices[0].message.content},
        {"role": "user", "content": "Now stream the summary."},
    ]
    streamed = "".join(
        chunk.choices[0].delta.content or ""
        for chunk in chat.create(model="stream", messages=messages, stream=True)
        if chunk.choices
    )
    messages += [
        {"role": "assistant", "content": streamed},
        {"role": "user", "content": "Read the parser."},
    ]
    called = chat.create(model="tools", messages=messages).choices[0].message
    messages += [
        called,
        {"role": "tool", "tool_call_id": "call_1", "content": "def parse(text): ..."},
    ]
    last = chat.create(model="json", messages=messages)
    # A second conversation with the same system prompt.
    other = [SYSTEM, {"role": "user", "content": "Unrelated: how do I list files?"}]
    chat.create(model="json", messages=other)
    assert len(seen) == 6
    assert proxy.stop()

    capsules, reports = _proxy_capsules(warm_project)
    assert all(report.ok for report in reports), [report.problems for report in reports]
    contents = [capsule.content for capsule in capsules]
    assert len(contents) == len(set(contents)), "a message was recorded twice"
    expected = [
        ("note", SYSTEM["content"]),
        ("prompt", "Why does test_parser fail?"),
        ("response", first.choices[0].message.content),
        ("prompt", "Fix it then."),
        ("response", second.choices[0].message.content),
        ("prompt", "Now stream the summary."),
        ("response", streamed),
        ("prompt", "Read the parser."),
        ("response", 'call read_file({"path": "src/app/parser.py"})'),
        ("tool_call", "def parse(text): ..."),
        ("response", last.choices[0].message.content),
        ("prompt", "Unrelated: how do I list files?"),
        ("response", reply_text({"messages": other})),
    ]
    assert [(capsule.kind, capsule.content) for capsule in capsules] == expected
    sessions = [capsule.metadata["session_id"] for capsule in capsules]
    assert len(set(sessions[:11])) == 1 and sessions[11] == sessions[12] != sessions[0]
    assert {capsule.metadata["model"] for capsule in capsules[1:]} == {"json", "stream", "tools"}
    assert capsules[9].metadata["tool_use_id"] == "call_1"


def test_the_key_is_never_stored_in_the_log_the_spool_or_the_logs(
    upstream, start_proxy, warm_project
):
    url, _ = upstream
    proxy = start_proxy(url)
    chat = client(proxy).chat.completions
    spool = project_spool_path(warm_project, load_rules(warm_project))
    spool.parent.mkdir(parents=True, exist_ok=True)
    # Holding the drain lock keeps the records in the spool, so its bytes can be read.
    lock = os.open(str(spool) + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        ask = [{"role": "user", "content": "Say hello."}]
        chat.create(model="json", messages=ask)
        "".join(
            c.choices[0].delta.content or ""
            for c in chat.create(model="stream", messages=[*ask, *ask], stream=True)
            if c.choices
        )
        spooled = _wait_for_records(spool, 3)
        assert oct(spool.stat().st_mode & 0o777) == "0o600"
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.close(lock)
    chat.create(model="json", messages=[{"role": "user", "content": "And goodbye."}])
    assert proxy.stop()

    assert API_KEY.encode() not in spooled and b"Say hello." in spooled
    logs = proxy.logs()
    assert API_KEY not in logs and "Say hello" not in logs
    capsules, _ = _proxy_capsules(warm_project)
    assert {capsule.content for capsule in capsules} >= {"Say hello.", "And goodbye."}
    dumped = _every_value_in_the_log(warm_project)
    assert "Say hello." in dumped and API_KEY not in dumped and API_KEY[3:20] not in dumped


def test_a_secret_in_a_message_is_redacted_before_it_is_spooled(
    upstream, start_proxy, warm_project
):
    url, _ = upstream
    proxy = start_proxy(url)
    planted = "ghp_" + "Zq8vW3nR5tY7uI9oP1aS2dF4gH6jK8lZxC0b"
    client(proxy).chat.completions.create(
        model="json", messages=[{"role": "user", "content": f"my token is {planted}"}]
    )
    assert proxy.stop()
    capsules, _ = _proxy_capsules(warm_project)
    [prompt] = [capsule for capsule in capsules if capsule.kind == "prompt"]
    assert planted not in prompt.content and "[REDACTED:" in prompt.content
    assert planted not in _every_value_in_the_log(warm_project)


def test_a_log_that_cannot_be_opened_costs_one_line_and_no_reply(
    upstream, start_proxy, warm_project, monkeypatch
):
    blocker = warm_project / "not-a-folder"
    blocker.write_text("a file where the log's folder should be")
    monkeypatch.setenv("CAPY_CAPSULES_PATH", str(blocker / "capsules.db"))
    url, _ = upstream
    proxy = start_proxy(url)
    ask = [{"role": "user", "content": "Still there?"}]
    reply = client(proxy).chat.completions.create(model="json", messages=ask)
    assert reply.choices[0].message.content == reply_text({"messages": ask})
    time.sleep(1.0)
    assert proxy.stop()
    lines = [line for line in proxy.stderr.read_text().splitlines() if line.strip()]
    assert len(lines) >= 1 and all(line.startswith("capy proxy: ") for line in lines)
    assert "Traceback" not in proxy.logs() and "Still there" not in proxy.logs()


def _wait_for_records(spool, count: int, seconds: float = 15.0) -> bytes:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        data = spool.read_bytes() if spool.exists() else b""
        if data.count(b"\x1e") >= count:
            return data
        time.sleep(0.05)
    raise AssertionError(f"the spool did not get {count} records")


def _every_value_in_the_log(project) -> str:
    """Every value of every table of the capsule log, as one text."""
    with open_capsules(project_dir=project) as store:
        names = [
            row[0]
            for row in store.conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%_data' "
                "AND name NOT LIKE '%_idx' AND name NOT LIKE '%_docsize' "
                "AND name NOT LIKE '%_config' AND name NOT LIKE '%_content'"
            )
        ]
        values = []
        for name in names:
            for row in store.conn.execute(f'SELECT * FROM "{name}"'):
                values.extend(str(value) for value in row)
    return "\n".join(values)
