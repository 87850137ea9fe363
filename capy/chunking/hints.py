"""What a label (usually a file name or path) says about its content.

The mappings are the chunking pack's `detection.extensions` and `code.extensions`; this module only
reads a label's extension and looks it up.
"""

from __future__ import annotations

import posixpath
import re

from capy.rules.views.chunking import ChunkingPack, ContentType

_EXTENSION = re.compile(r"\.([A-Za-z0-9]{1,10})$")


def extension(label: str) -> str | None:
    """The lower-case extension of a label's last path segment, ignoring a URL query."""
    name = posixpath.basename(label.strip().split("?", 1)[0].split("#", 1)[0])
    if " " in name:  # "pytest -v (harbor)" or a shell command, not a file name
        return None
    match = _EXTENSION.search(name)
    return match.group(1).lower() if match else None


def content_type_from_label(label: str, rules: ChunkingPack) -> str | None:
    ext = extension(label)
    if ext is None:
        return None
    if ext in rules.detection.extensions:
        return rules.detection.extensions[ext].value
    return ContentType.CODE.value if ext in rules.code.extensions else None


def language_from_label(label: str, rules: ChunkingPack) -> str | None:
    ext = extension(label)
    return rules.code.extensions.get(ext) if ext else None
