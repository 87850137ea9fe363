"""The peer for `capy bench peer`: context-mode, the TypeScript MCP server, from the npm registry.

It is installed once into a cache folder named after its version and reused from there, so a
second run (and the test) needs no network. The registry keeps only a few releases, so the
version is pinned and named in every report.

npm runs with `--ignore-scripts`: context-mode's own postinstall edits the user's agent settings
(~/.claude plugin registries) and refuses Linux with Node < 22.5; the one install script the
server needs, better-sqlite3's native build, is then run by itself with `npm rebuild`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

PEER_PACKAGE = "context-mode"
PEER_VERSION = "1.0.169"
# The package's `bin` entry: what `context-mode` with no arguments runs (its MCP server).
PEER_ENTRY = Path("node_modules") / PEER_PACKAGE / "cli.bundle.mjs"
NATIVE_DEPENDENCY = "better-sqlite3"
# Node reads this extra CA bundle at every start; on this kind of machine that costs each Node
# process a noticeable share of its start, so the peer runs without it (npm keeps it: the
# registry may sit behind a proxy that needs it).
SLOW_NODE_VARIABLE = "NODE_EXTRA_CA_CERTS"
INSTALL_TIMEOUT_S = 1200


@dataclass(frozen=True)
class Peer:
    name: str
    version: str
    command: list[str]
    folder: Path


class PeerMissing(Exception):
    """The peer cannot run here; the message is one sentence saying why and what to do."""


# Names the install folder instead of the cache (CI and the test point it at a pre-installed peer).
FOLDER_VARIABLE = "CAPY_BENCH_PEER_DIR"


def cache_folder() -> Path:
    if os.environ.get(FOLDER_VARIABLE):
        return Path(os.environ[FOLDER_VARIABLE])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "capy-bench" / f"{PEER_PACKAGE}-{PEER_VERSION}"


def find_peer(folder: Path | None = None, install: bool = True) -> Peer:
    """The installed peer, installing it first when asked and absent; PeerMissing otherwise."""
    folder = folder or cache_folder()
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None:
        raise PeerMissing("Node.js is not installed, so context-mode cannot run; install Node.js")
    if not _installed(folder):
        if not install:
            raise PeerMissing(
                f"{PEER_PACKAGE} {PEER_VERSION} is not installed in {folder}; "
                "run `capy bench peer` once with network access to install it"
            )
        if npm is None:
            raise PeerMissing("npm is not installed, so context-mode cannot be installed")
        _install(npm, folder)
    return Peer(PEER_PACKAGE, PEER_VERSION, [node, str(folder / PEER_ENTRY)], folder)


def peer_environment(environ: dict[str, str]) -> dict[str, str]:
    return {key: value for key, value in environ.items() if key != SLOW_NODE_VARIABLE}


def _installed(folder: Path) -> bool:
    native = folder / "node_modules" / NATIVE_DEPENDENCY / "build" / "Release"
    return (folder / PEER_ENTRY).is_file() and any(native.glob("*.node"))


def _install(npm: str, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    quiet = ["--prefix", str(folder), "--no-audit", "--no-fund", "--loglevel=error"]
    steps = (
        [npm, "install", *quiet, "--ignore-scripts", f"{PEER_PACKAGE}@{PEER_VERSION}"],
        [npm, "rebuild", *quiet, NATIVE_DEPENDENCY],
    )
    for step in steps:
        try:
            done = subprocess.run(
                step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            raise PeerMissing(
                f"`npm {step[1]}` of {PEER_PACKAGE} took over {INSTALL_TIMEOUT_S} s; "
                "check the network and run again"
            ) from None
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise PeerMissing(
                f"`npm {step[1]}` of {PEER_PACKAGE}@{PEER_VERSION} failed ({last}); "
                "check the network or the registry and run again"
            )
