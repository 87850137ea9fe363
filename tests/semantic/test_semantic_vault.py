"""Vault messages on the semantic layer: a real vault file, a real transcript imported, its
messages embedded as a backlog, found by meaning through the vault's search, and embedded
again when the session arrives larger. Skipped, saying why, without the extra."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capy.rules import load_rules

RULES = load_rules()
TURNS = [
    "To end the service gracefully, send SIGTERM; workers finish their jobs first.",
    "A 401 appears after token refresh when the clock drifts.",
]


def _why_not() -> str | None:
    from capy.bench.hybrid import semantic_ready

    return semantic_ready(RULES)


needs_model = pytest.mark.skipif(
    _why_not() is not None,
    reason=f"semantic layer unavailable: {_why_not()} (.ci/run installs capy-mcp[semantic])",
)


def _transcript(folder: Path, prompts: list[str]) -> Path:
    records = []
    for number, text in enumerate(prompts):
        base = {"sessionId": "sem-1", "cwd": "/home/dev/demo"}
        stamp = f"2026-01-02T03:{number:02d}:00.000Z"
        records.append(
            {
                **base,
                "timestamp": stamp,
                "type": "user",
                "uuid": f"u{number}",
                "message": {"role": "user", "content": text},
            }
        )
    path = folder / "sem-1.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_a_vault_without_vectors_searches_lexically(tmp_path: Path) -> None:
    from capy.vault import open_vault
    from capy.vault.corpus import search_vault
    from capy.vault.importer import ImportOptions, import_sessions

    _transcript(tmp_path / "sessions", TURNS)
    with open_vault(tmp_path / "vault.db") as vault:
        import_sessions(vault, ImportOptions(source=tmp_path / "sessions"))
        (result,) = search_vault(vault, ["terminate the server politely"])
    assert result.hits == ()


@needs_model
def test_vault_messages_are_embedded_and_found_by_meaning(tmp_path: Path) -> None:
    from capy.semantic.embedder import shared_embedder
    from capy.semantic.vault import embed_vault, vault_backlog
    from capy.vault import open_vault
    from capy.vault.corpus import search_vault
    from capy.vault.importer import ImportOptions, import_sessions

    embedder = shared_embedder(RULES.view("semantic").model())
    _transcript(tmp_path / "sessions", TURNS)
    with open_vault(tmp_path / "vault.db") as vault:
        import_sessions(vault, ImportOptions(source=tmp_path / "sessions"))
        assert vault_backlog(vault, RULES) == (1, 2)
        assert embed_vault(vault, RULES, embedder) == 2
        assert vault_backlog(vault, RULES) == (0, 0)
        blob = vault.conn.execute("SELECT vector FROM message_vectors LIMIT 1").fetchone()[0]
        assert len(blob) == 384 * 2  # float16, in the encrypted vault file
        (result,) = search_vault(vault, ["terminate the server politely"])
        assert result.hits and "SIGTERM" in result.hits[0].content
        assert result.hits[0].layer == "vector"
        (other_role,) = search_vault(vault, ["terminate the server politely"], roles=["assistant"])
        assert other_role.hits == ()  # the role filter holds for vector hits too
        # The session went on: it comes back larger, and its vectors are made again.
        _transcript(tmp_path / "sessions", [*TURNS, "The staging disk fills up on Fridays."])
        import_sessions(vault, ImportOptions(source=tmp_path / "sessions"))
        assert vault_backlog(vault, RULES)[0] == 1
        assert embed_vault(vault, RULES, embedder) == 3
