"""Intent search over large output: a real encrypted store in the test's private HOME, real
indexing and retrieval; the reply is checked the way the agent reads it."""

from __future__ import annotations

import json
import re

import pytest

from capy.api.intent import batch_reply, intent_reply
from capy.api.workspace import Workspace

# A visibly fake token in the shape the secrets pack detects (its own example).
FAKE_TOKEN = "ghp_a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"
LABEL = "execute:shell:test"


@pytest.fixture
def workspace(project_dir) -> Workspace:
    return Workspace(project_dir)


def pytest_output(failures: dict[str, str], passes: int = 3000) -> str:
    """pytest -v output: thousands of passing tests, the given ones failing at the end."""
    lines = ["============================= test session starts =============================="]
    lines += [
        f"tests/test_module_{n % 40}.py::test_behaviour_{n} PASSED [{n * 100 // passes:3d}%]"
        for n in range(passes)
    ]
    lines.append("=================================== FAILURES ===================================")
    for name, message in failures.items():
        lines += [
            f"________________________________ {name} ________________________________",
            f"    def {name}():",
            f">       {message}",
            f"E       AssertionError: {message}",
            "tests/test_parser.py:42: AssertionError",
        ]
    lines += [f"FAILED tests/test_parser.py::{name} - AssertionError" for name in failures]
    lines.append(f"============ {len(failures)} failed, {passes} passed in 93.10s ============")
    return "\n".join(lines) + "\n"


def source_rows(workspace: Workspace, label: str) -> list[tuple[str, int]]:
    with workspace.store() as store:
        return store.conn.execute(
            "SELECT kind, raw_size FROM sources WHERE label = ?", (label,)
        ).fetchall()


def test_large_output_shrinks_and_keeps_the_failure(workspace: Workspace) -> None:
    output = pytest_output({"test_parse_header_folds_case": "assert 'X-Id' == 'x-id'"})
    reply = intent_reply(workspace, output, intent="which tests failed and why", label=LABEL)
    assert len(output.encode()) > 150_000
    assert len(reply.encode()) * 20 <= len(output.encode())
    assert "test_parse_header_folds_case" in reply
    assert "AssertionError: assert 'X-Id' == 'x-id'" in reply
    assert reply.startswith("Indexed ")
    assert f"`{LABEL}` (ephemeral)" in reply
    call = (
        'capy_search(queries=["which tests failed and why"], '
        f'source="{LABEL}", include_kinds=["ephemeral"])'
    )
    assert call in reply
    # The sections answer: the output's distinctive terms are left out (the executor pack's
    # max_terms_with_sections), they cost bytes and answer nothing asked.
    assert "Searchable terms" not in reply
    assert source_rows(workspace, LABEL) == [("ephemeral", len(output.encode()))]


def test_nothing_matched_lists_the_distinctive_terms_once_per_family(
    workspace: Workspace,
) -> None:
    output = pytest_output({"test_parse_header_folds_case": "assert 'X-Id' == 'x-id'"})
    reply = intent_reply(workspace, output, intent="kubernetes pod eviction quota", label=LABEL)
    assert reply.startswith("Nothing in the output matched")
    terms = re.search(r"Terms: (.+)\.$", reply, re.MULTILINE)
    assert terms and "`test_parse_header_folds_case`" in terms.group(1)
    # One family of numbered names is one term, not sixteen.
    assert len(re.findall(r"`test_behaviour_\d+`", terms.group(1))) <= 1


def test_a_second_output_under_the_same_label_replaces_the_first(workspace: Workspace) -> None:
    first = pytest_output({"test_first_run_only": "assert 1 == 2"})
    second = pytest_output({"test_second_run_only": "assert 3 == 4"})
    intent_reply(workspace, first, intent="failures", label=LABEL)
    reply = intent_reply(workspace, second, intent="test_first_run_only", label=LABEL)
    # Only in the "nothing matched" line and the follow-up call: no section, no term.
    assert 'Nothing in the output matched "test_first_run_only".' in reply
    assert reply.count("test_first_run_only") == 2
    assert "test_second_run_only" in reply  # the errors of the output in force are listed
    assert source_rows(workspace, LABEL) == [("ephemeral", len(second.encode()))]


def test_nothing_matched_says_so_in_one_line_with_the_terms(workspace: Workspace) -> None:
    output = "\n".join(f"GET /static/asset_{n}.css 200 {n * 7} bytes" for n in range(4000))
    reply = intent_reply(workspace, output, intent="zeppelin quartz lemonade", label="access")
    # Below the relevance floor: said in one line with the output's terms, and nothing else.
    assert reply.startswith('Nothing in the output matched "zeppelin quartz lemonade". ')
    assert "Terms: `" in reply and "Errors and failures" not in reply
    assert reply.count("\n") == 1
    budget = workspace.rules.view("executor").limits.output.intent_reply
    assert len(reply.encode()) <= budget.nothing_matched_bytes


def test_unicode_output_and_intent(workspace: Workspace) -> None:
    lines = [f"2026-05-14 INFO 注文 {n} を処理しました ✓ café" for n in range(3000)]
    lines.insert(1700, "2026-05-14 ERROR 在庫の同期に失敗しました: 倉庫 Zürich-7 が応答しません 🚨")
    output = "\n".join(lines)
    reply = intent_reply(workspace, output, intent="倉庫 Zürich-7 の同期エラー", label="ログ")
    assert "在庫の同期に失敗しました: 倉庫 Zürich-7 が応答しません 🚨" in reply
    assert 'queries=["倉庫 Zürich-7 の同期エラー"], source="ログ"' in reply
    assert len(reply.encode()) * 20 <= len(output.encode())
    reply.encode("utf-8")  # no lone surrogates or split characters


def test_secrets_never_reach_the_reply(workspace: Workspace) -> None:
    lines = [f"deploy step {n}: ok" for n in range(3000)]
    lines.insert(2000, f"ERROR push rejected: token {FAKE_TOKEN} lacks the workflow scope")
    output = "\n".join(lines)
    reply = intent_reply(
        workspace, output, intent=f"why was the push with {FAKE_TOKEN} rejected", label="deploy"
    )
    assert FAKE_TOKEN not in reply
    assert "ERROR push rejected: token [REDACTED:secrets.github-pat]" in reply
    assert "why was the push with [REDACTED:secrets.github-pat] rejected" in reply
    with workspace.store() as store:
        assert not store.conn.execute(
            "SELECT count(*) FROM chunks WHERE content LIKE ?", (f"%{FAKE_TOKEN}%",)
        ).fetchone()[0]


def test_a_secret_in_an_intent_that_matches_nothing_is_not_echoed(workspace: Workspace) -> None:
    output = "\n".join(f"GET /static/asset_{n}.css 200" for n in range(4000))
    reply = intent_reply(workspace, output, intent=f"token {FAKE_TOKEN}", label="access")
    assert FAKE_TOKEN not in reply
    assert 'Nothing in the output matched "token [REDACTED:secrets.github-pat]".' in reply


def test_binary_output_is_refused_in_one_sentence(workspace: Workspace) -> None:
    output = "\x00\x01\x02 binary \x03" * 2000
    reply = intent_reply(workspace, output, intent="what is in it", label="blob")
    assert reply.startswith("The output (")
    assert "was not indexed" in reply and "binary" in reply and "without an intent" in reply
    assert "\x00" not in reply and reply.count("\n") == 1
    assert source_rows(workspace, "blob") == []


def test_reply_stays_within_the_pack_budget(workspace: Workspace) -> None:
    budget = workspace.rules.view("executor").limits.output.intent_reply
    failures = {f"test_case_{n}_breaks": f"assert {n} == {n + 1}" for n in range(30)}
    output = pytest_output(failures, passes=6000)
    reply = intent_reply(workspace, output, intent="which tests failed", label=LABEL)
    answer = reply.split("\nSearchable terms")[0]
    header = answer.split("\n", 1)[0]
    # Errors first within their own budget, then sections within the reply budget.
    slack = 200 + 100 * budget.max_sections  # section headings, gap marks, blank lines
    limit = budget.max_problem_bytes + budget.max_reply_bytes + slack + len(header.encode())
    assert len(answer.encode()) <= limit
    assert answer.count("\nFAILED ") + answer.count("\nE       ") >= 1


def test_batch_answers_every_query_from_one_source(workspace: Workspace) -> None:
    tests = pytest_output({"test_invoice_totals": "assert 10.13 == 10.12"})
    build = "\n".join(f"[{n}/900] compiling module_{n}.c" for n in range(900))
    build += "\nsrc/codec/frame.c:318:17: error: implicit declaration of function 'crc32c'\n"
    sections = [("pytest -v", tests), ("make", build)]
    reply = batch_reply(
        workspace,
        sections,
        queries=["which tests failed", "compiler error in frame.c"],
        label="batch:shell:test",
    )
    assert "Indexed sections:" in reply
    assert re.search(r"^- `pytest -v`: \d+\.\d KiB$", reply, re.MULTILINE)
    assert re.search(r"^- `make`: \d+\.\d KiB$", reply, re.MULTILINE)
    assert "\n## which tests failed\n" in reply and "\n## compiler error in frame.c\n" in reply
    assert "test_invoice_totals" in reply
    assert "frame.c:318:17: error: implicit declaration of function 'crc32c'" in reply
    queries = json.dumps(["which tests failed", "compiler error in frame.c"])
    assert f'capy_search(queries={queries}, source="batch:shell:test"' in reply
    assert [kind for kind, _ in source_rows(workspace, "batch:shell:test")] == ["ephemeral"]
    assert len(reply.encode()) * 10 <= len(tests.encode()) + len(build.encode())


def test_batch_without_queries_lists_what_was_indexed(workspace: Workspace) -> None:
    sections = [("ls", "\n".join(f"file_{n}.txt" for n in range(2000))), ("true", "")]
    reply = batch_reply(workspace, sections, queries=[], label="batch:shell:empty")
    assert "- `ls`: " in reply and "- `true`: 0 B" in reply
    assert "No queries were given" in reply
    assert 'capy_search(queries=["<what you need>"], source="batch:shell:empty"' in reply
