"""FTS5 merge settings for bulk loads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlcipher3


@contextmanager
def bulk_merge_settings(conn: sqlcipher3.Connection) -> Iterator[None]:
    yield
