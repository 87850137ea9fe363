"""One ONNX session per process: text in, normalised vectors out, stored as float16 bytes.

Mean pooling over the last hidden state, masked by the attention mask, then L2 normalisation
(as sentence-transformers does for all-MiniLM-L6-v2), so a dot product is the cosine.

A session is most of what the semantic layer costs in memory. ONNX Runtime folds the int8
model's constant weights into float32 at load; the embedding tables are kept int8 by gathering
their rows first (`capy.semantic.graph`: same vectors, bit for bit), which leaves the layers'
43 MB. With numpy, ONNX Runtime and a batch's buffers the loaded model still adds about 150 MB
to the server's resident memory at its peak (no arena, two pieces a batch, the graph loaded
from a file). A long-lived process therefore drops a session nobody used for the pack's
`release_after_seconds` (`release_unused`) and hands the freed memory back to the system; the
next batch or query vector loads it again (about a second).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from capy.semantic import require_extra
from capy.semantic.artifacts import locate
from capy.semantic.graph import gather_before_dequantize

if TYPE_CHECKING:
    import numpy as np

    from capy.rules.views.semantic import EmbeddingModel

_sessions: dict[tuple[str, int], OnnxEmbedder] = {}
_lock = threading.Lock()


class OnnxEmbedder:
    """Implements `capy.capsules.stages.embed.Embedder` (and embeds queries for search)."""

    def __init__(self, model: EmbeddingModel, threads: int = 1) -> None:
        require_extra()
        import onnxruntime
        from tokenizers import Tokenizer

        found = locate(model)
        self.model = model
        self.model_id = model.model_id
        self.dims = model.dimensions
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # No ONNX Runtime arena: it keeps the buffers of the largest batch it ran for as long as
        # the session lives, where plain allocations go back to the heap (and, trimmed, to the
        # system). Measured in a bare process over 40 batches of 4 pieces: 245 -> 192 MB
        # resident after the batches, the same vectors, no slower.
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
        self._session = _load_session(onnxruntime, found.path("model.onnx"), options)
        _trim_heap()  # what loading held (the parsed model, the folding) goes back now
        self._inputs = {entry.name for entry in self._session.get_inputs()}
        tokenizer = Tokenizer.from_file(str(found.path("tokenizer.json")))
        tokenizer.enable_truncation(max_length=model.max_tokens)
        tokenizer.enable_padding()  # to the batch's longest, not the file's fixed length
        self._tokenizer = tokenizer
        plain = Tokenizer.from_file(str(found.path("tokenizer.json")))
        plain.no_truncation()
        plain.no_padding()
        self._plain = plain  # for cutting windows: no truncation, no special-token padding
        self._run_lock = threading.Lock()
        self.last_used = time.monotonic()

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """float32 rows of unit length, one per text."""
        import numpy as np

        self.last_used = time.monotonic()
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        with self._run_lock:
            hidden = self._session.run(None, feeds)[0]
        if self.model.pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def windows(
        self, title: str, content: str, stride: int, most: int, size: int | None = None
    ) -> list[str]:
        """`content` cut into pieces the model reads whole (`size` tokens, at most its
        `max_tokens`, less the title's and the special tokens), `stride` tokens apart, at most
        `most`, each led by the title: a chunk longer than the model's input is represented by
        all of its parts, not by its first 128 tokens."""
        head = f"{title}\n" if title.strip() else ""
        if not content.strip():
            return [head.strip()] if head else []
        whole = f"{head}{content}".strip()
        size = min(size or self.model.max_tokens, self.model.max_tokens)
        room = size - 2 - len(self._plain.encode(head, add_special_tokens=False))
        offsets = self._plain.encode(content, add_special_tokens=False).offsets
        if len(offsets) <= room or room < 8:
            return [whole]
        pieces = []
        for start in range(0, len(offsets), max(1, stride)):
            end = min(start + room, len(offsets))
            pieces.append(f"{head}{content[offsets[start][0] : offsets[end - 1][1]]}".strip())
            if end == len(offsets) or len(pieces) == most:
                break
        return pieces

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        """float16 bytes per text, as the stores keep them."""
        return [row.astype("<f2").tobytes() for row in self.vectors(texts)]


def _load_session(onnxruntime: Any, model_path: Any, options: Any) -> Any:
    """The session for the model file, its table lookups gathering int8 rows before they are
    dequantized (capy.semantic.graph: the same numbers, without a float32 copy of the
    vocabulary's table). The rewritten graph is loaded from a private temporary file, not
    from bytes: a session built from bytes kept about 23 MB more resident (a copy of the
    serialised model) and peaked 26 MB higher while loading."""
    import contextlib
    import os
    import tempfile

    graph = gather_before_dequantize(model_path.read_bytes())
    try:
        handle, path = tempfile.mkstemp(suffix=".onnx", prefix="capy-model-")
    except OSError:
        return onnxruntime.InferenceSession(graph, options, providers=[_PROVIDER])
    try:
        with os.fdopen(handle, "wb") as written:
            written.write(graph)
        del graph
        return onnxruntime.InferenceSession(path, options, providers=[_PROVIDER])
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


_PROVIDER = "CPUExecutionProvider"


def shared_embedder(model: EmbeddingModel, threads: int = 1) -> OnnxEmbedder:
    """The process's session for `model` (loaded on first use, about a second)."""
    key = (model.model_id, threads)
    with _lock:
        if key not in _sessions:
            _sessions[key] = OnnxEmbedder(model, threads)
        return _sessions[key]


class LazyEmbedder:
    """The process's session for `model`, loaded only when a text is embedded: a round of
    the background embedder that finds no backlog loads nothing (and keeps nothing alive)."""

    def __init__(self, model: EmbeddingModel, threads: int = 1) -> None:
        self.model = model
        self.model_id = model.model_id
        self.dims = model.dimensions
        self._threads = threads

    def __getattr__(self, name: str) -> Any:
        return getattr(shared_embedder(self.model, self._threads), name)


def release_unused(after_seconds: float | None) -> int:
    """Drop the sessions no text went through for `after_seconds` (None: keep them) and give
    the freed memory back to the system; how many were dropped. A call still running on a
    dropped session keeps it until it returns."""
    if after_seconds is None:
        return 0
    now = time.monotonic()
    with _lock:
        stale = [key for key, found in _sessions.items() if now - found.last_used >= after_seconds]
        for key in stale:
            del _sessions[key]
    if stale:
        import gc

        gc.collect()
        _trim_heap()
    return len(stale)


def _trim_heap() -> None:
    """glibc keeps freed memory in its arenas; malloc_trim returns it (elsewhere: nothing)."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        if libc is not None and hasattr(libc, "malloc_trim"):
            libc.malloc_trim(0)
    except OSError:
        pass


def decode(blobs: Sequence[bytes], dims: int) -> np.ndarray:
    """float16 blobs as one float32 matrix (rows in order)."""
    import numpy as np

    if not blobs:
        return np.zeros((0, dims), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype="<f2").reshape(len(blobs), dims)
