"""`capy_stats` / `capy stats`: what a session kept out of context, and what the store holds."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from capy.api.reply import ToolReply
from capy.units import human_bytes

if TYPE_CHECKING:
    from capy.api.stats import SessionStats
    from capy.api.workspace import Workspace


def stats_report(workspace: Workspace, stats: SessionStats | None) -> dict[str, Any]:
    """The session's savings (None: no session recorded yet) and the knowledge base's shape."""
    return {
        "session": stats.to_dict() if stats is not None else None,
        "knowledge_base": knowledge_summary(workspace),
    }


def knowledge_summary(workspace: Workspace) -> dict[str, Any]:
    from capy.store.counters import total_chunks
    from capy.store.retention import summarize_sources

    with workspace.store() as store:
        kinds = summarize_sources(store, rules=workspace.rules)
        chunks = total_chunks(store.conn)
        path = store.path
    return {
        "path": str(path),
        "file_bytes": _file_size(path),
        "wal_bytes": _file_size(path.with_name(path.name + "-wal")),
        "chunks": chunks,
        "kinds": [
            {"kind": k.kind, "sources": k.sources, "raw_bytes": k.raw_bytes, "tiers": k.tiers}
            for k in kinds
        ],
    }


def stats_reply(workspace: Workspace) -> ToolReply:
    """This session's report (the workspace's own stats)."""
    report = stats_report(workspace, workspace.stats)
    return ToolReply(render_stats(report), data=report)


def render_stats(report: dict[str, Any]) -> str:
    lines = ["# capy: context savings"]
    session = report["session"]
    if session is None or not session["tools"]:
        lines.append("\nNo tool calls recorded in this session yet.")
    else:
        total = session["total"]
        processed, returned = total["processed_bytes"], total["returned_bytes"]
        share = 100.0 * total["kept_out_bytes"] / processed if processed else 0.0
        lines += [
            f"\nSession `{session['session_id']}`: {total['calls']} call(s); "
            f"{human_bytes(processed)} processed, {human_bytes(returned)} returned to the context: "
            f"**{share:.1f}% kept out**, about {total['estimated_tokens_saved']:,} tokens "
            f"saved (estimate: 4 bytes a token); {total['cache_hits']} cache hit(s).",
            "",
            "| tool | calls | errors | processed | returned | kept out |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for name, item in session["tools"].items():
            kept = max(item["processed_bytes"] - item["returned_bytes"], 0)
            lines.append(
                f"| {name} | {item['calls']} | {item['errors']} | "
                f"{human_bytes(item['processed_bytes'])} | {human_bytes(item['returned_bytes'])} | "
                f"{human_bytes(kept)} |"
            )
    kb = report["knowledge_base"]
    lines += [
        "",
        "## Knowledge base",
        f"{kb['chunks']:,} chunks; file {human_bytes(kb['file_bytes'])}, "
        f"WAL {human_bytes(kb['wal_bytes'])}.",
    ]
    if kb["kinds"]:
        lines += ["", "| kind | sources | raw size | tiers |", "|---|---:|---:|---|"]
        for kind in kb["kinds"]:
            tiers = ", ".join(f"{tier} {count}" for tier, count in kind["tiers"].items())
            size = human_bytes(kind["raw_bytes"])
            lines.append(f"| {kind['kind']} | {kind['sources']} | {size} | {tiers} |")
    else:
        lines.append("No sources indexed yet.")
    return "\n".join(lines)


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
