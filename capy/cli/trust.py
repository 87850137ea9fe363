"""`capy trust`: let a project's own overlays and config loosen capy's guards, or stop that."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from cyclopts import Parameter


def trust(
    path: Path | None = None,
    *,
    revoke: Annotated[bool, Parameter(name="--revoke", negative=())] = False,
    list_trusted: Annotated[bool, Parameter(name="--list", negative=())] = False,
    json_output: Annotated[bool, Parameter(name="--json", negative=())] = False,
) -> int:
    """Trust a project's .capy/rules/ overlays and config files as they are now.

    Project files are untrusted by default: they may only tighten security, and what would
    loosen it is ignored with a warning. Trusting writes the project's root and a hash of those
    files to your own config dir; editing, adding or removing one drops the trust again.

    Parameters
    ----------
    path
        A folder inside the project (default: the current one).
    revoke
        Stop trusting the project.
    list_trusted
        List the trusted projects and whether their files still match.
    json_output
        With --list, print JSON.
    """
    from capy.cli.output import error_line
    from capy.config.paths import project_root
    from capy.trust import store

    try:
        if list_trusted:
            return _list(store, json_output)
        root = project_root(path if path is not None else Path.cwd())
        if revoke:
            if not store.revoke(root):
                error_line(f"{root} was not trusted; `capy trust --list` shows the trusted ones")
                return 1
            print(f"no longer trusted: {root}")
            return 0
        files = store.project_files(root)
        if not files:
            error_line(
                f"{root} has no .capy/rules/*.yaml, .capy/config.toml or .capy.toml to trust"
            )
            return 1
        entry = store.trust(root)
    except store.TrustStoreError as error:
        error_line(str(error))
        return 1
    print(f"trusted: {root} ({len(files)} files: {', '.join(entry.files)})")
    print("editing, adding or removing one of them drops the trust; `capy trust --revoke` ends it")
    return 0


def _list(store, json_output: bool) -> int:
    from capy.cli.output import print_json

    rows = [
        {
            "root": entry.root,
            "trusted_at": entry.trusted_at,
            "files": list(entry.files),
            "matches": Path(entry.root).is_dir() and entry.matches(Path(entry.root)),
        }
        for entry in store.trusted_projects()
    ]
    if json_output:
        print_json({"store": str(store.store_path()), "projects": rows})
        return 0
    if not rows:
        print("no trusted projects")
    for row in rows:
        state = "trusted" if row["matches"] else "files changed since, trust dropped"
        print(f"{row['root']}  ({state}; trusted {row['trusted_at']})")
    return 0
