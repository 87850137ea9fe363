"""`vault_search_reply` (the `capy_vault_search` tool): markdown per query, filters, the
no-vault answer, and mistakes as tool input errors."""

from __future__ import annotations

import pytest

from capy.api.reply import ToolInputError
from capy.api.vault import vault_search_reply
from capy.api.workspace import Workspace
from capy.cli.vault import import_


@pytest.fixture
def workspace(tmp_path, vault_path, monkeypatch) -> Workspace:
    monkeypatch.setenv("CAPY_VAULT_PATH", str(vault_path))
    project = tmp_path / "project"
    project.mkdir()
    return Workspace(project)


@pytest.fixture
def archived(workspace, vault_path, tmp_path, session_writer):
    session_writer(tmp_path / "sessions", "api-session", turns=3)
    assert import_(source=tmp_path / "sessions", path=vault_path, as_json=True) == 0
    return workspace


def test_without_a_vault_the_reply_says_how_to_create_one(workspace, vault_path):
    reply = vault_search_reply(workspace, ["zebras"])
    assert not reply.is_error
    assert "`capy vault import`" in reply.text
    assert not vault_path.exists()  # asking does not create a vault


def test_hits_are_grouped_per_query_with_session_facts(archived, snapshot):
    reply = vault_search_reply(archived, ["zebras", "notes1.txt"], limit=2)
    assert not reply.is_error
    assert reply.text.startswith("## zebras\n\n**1. prompt number")
    assert "— 2026-01-02 · /home/dev/demo" in reply.text
    assert "## notes1.txt" in reply.text
    assert reply.text == snapshot


def test_filters_narrow_the_hits(archived):
    elsewhere = vault_search_reply(archived, ["zebras"], project="elsewhere")
    assert "No matches in the archived sessions." in elsewhere.text
    window = vault_search_reply(
        archived, ["zebras"], after="2026-01-02T03:01", before="2026-01-02T03:02"
    )
    assert window.text.count("**") == 2 and "prompt number 1" in window.text


def test_secrets_never_reach_the_reply(archived, fake_token):
    reply = vault_search_reply(archived, ["reply number"])
    assert "reply number" in reply.text and fake_token not in reply.text


@pytest.mark.parametrize(
    ("queries", "options", "message"),
    [
        ([" "], {}, "give at least one non-empty query"),
        (["x"], {"limit": 0}, "limit must be at least 1"),
        (["x"], {"after": "yesterday"}, "is not a date or time"),
    ],
)
def test_mistakes_are_tool_input_errors(archived, queries, options, message):
    with pytest.raises(ToolInputError, match=message):
        vault_search_reply(archived, queries, **options)
