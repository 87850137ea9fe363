"""The server keeps its capsule log connections open between recalls: reused, current with
what other processes write, and dropped when the file changes underneath them."""

from __future__ import annotations

import pytest

from capy.api.recall import recall_reply
from capy.api.workspace import Workspace
from capy.capsules import CapsuleDraft, open_capsules
from capy.capsules.location import locate_capsules
from capy.capsules.pipeline import drain
from capy.store import StoreError


def _keep(project_dir, text: str) -> None:
    """Write and distil a capsule from another connection, as a hook's drainer does."""
    with open_capsules(project_dir=project_dir) as store:
        store.write([CapsuleDraft(kind="note", content=text, source="cli")])
        drain(store)


def test_the_server_recalls_through_one_kept_connection_and_sees_later_writes(project_dir):
    _keep(project_dir, "The staging deploy failed because the migration lock was held.")
    workspace = Workspace(project_dir, keep_store_open=True)
    wal = locate_capsules(None, project_dir).path.with_name("capsules.db-wal")
    first = recall_reply(workspace, query="why did the staging deploy fail")
    assert "migration lock" in first.text
    assert wal.exists()  # the kept connection keeps the WAL: no checkpoint and delete per call
    with workspace.capsules() as store:
        conn = store.conn
    _keep(project_dir, "The nightly backup job writes to the wrong bucket.")
    second = recall_reply(workspace, query="which bucket does the nightly backup use")
    assert "wrong bucket" in second.text  # a connection left idle pins no old snapshot
    with workspace.capsules() as store:
        assert store.conn is conn
    workspace.close_store()
    with pytest.raises(StoreError, match="capsule log is closed"), workspace.capsules():
        pass


def test_a_log_moved_away_under_the_server_is_opened_afresh(project_dir):
    _keep(project_dir, "The cache key includes the locale since the French pages went stale.")
    workspace = Workspace(project_dir, keep_store_open=True)
    assert "locale" in recall_reply(workspace, query="what does the cache key include").text
    path = locate_capsules(None, project_dir).path
    for suffix in ("", "-wal", "-shm"):
        moved = path.with_name(path.name + suffix)
        if moved.exists():
            moved.rename(moved.with_name("old-" + moved.name))
    _keep(project_dir, "The retry budget is three attempts with jittered backoff.")
    reply = recall_reply(workspace, query="what does the cache key include")
    assert "locale" not in reply.text  # the new file, not the connection to the moved one
    assert "retry budget" in recall_reply(workspace, query="how many retry attempts").text
    workspace.close_store()
