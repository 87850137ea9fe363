"""What a label (usually a file name or path) says about its content.

The chunking pack has no field for file extensions yet (its schema is closed), so the mapping lives
here until `detection.extensions` and `code.extensions` join rules/chunking.yaml; then these two
tables become the pack's data and this module only interprets them.
"""

from __future__ import annotations

import posixpath
import re

from capy.rules.views.chunking import ContentType

# Extension -> content type for formats content sniffing can mistake (a README whose first lines
# look like a log, a JSON file a log line could open).
EXTENSION_CONTENT_TYPES: dict[str, ContentType] = {
    "md": ContentType.MARKDOWN,
    "markdown": ContentType.MARKDOWN,
    "mdx": ContentType.MARKDOWN,
    "json": ContentType.JSON,
    "geojson": ContentType.JSON,
    "ipynb": ContentType.JSON,
    "jsonl": ContentType.LOG,
    "ndjson": ContentType.LOG,
    "log": ContentType.LOG,
    "csv": ContentType.CSV,
    "html": ContentType.HTML,
    "htm": ContentType.HTML,
    "xhtml": ContentType.HTML,
    "diff": ContentType.DIFF,
    "patch": ContentType.DIFF,
}

# Extension -> language as the code pack's definition rules name languages.
EXTENSION_LANGUAGES: dict[str, str] = {
    "py": "python",
    "pyi": "python",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "tsx": "typescript",
    "mts": "typescript",
    "go": "go",
    "rs": "rust",
    "java": "java",
    "kt": "kotlin",
    "kts": "kotlin",
    "cs": "csharp",
    "scala": "scala",
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "hpp": "cpp",
    "rb": "ruby",
    "php": "php",
    "sh": "shell",
    "bash": "shell",
    "zsh": "shell",
    "ex": "elixir",
    "exs": "elixir",
    "pl": "perl",
    "pm": "perl",
    "r": "r",
    "sql": "sql",
}

_EXTENSION = re.compile(r"\.([A-Za-z0-9]{1,10})$")


def extension(label: str) -> str | None:
    """The lower-case extension of a label's last path segment, ignoring a URL query."""
    name = posixpath.basename(label.strip().split("?", 1)[0].split("#", 1)[0])
    if " " in name:  # "pytest -v (harbor)" or a shell command, not a file name
        return None
    match = _EXTENSION.search(name)
    return match.group(1).lower() if match else None


def content_type_from_label(label: str) -> str | None:
    ext = extension(label)
    if ext is None:
        return None
    if ext in EXTENSION_CONTENT_TYPES:
        return EXTENSION_CONTENT_TYPES[ext].value
    return ContentType.CODE.value if ext in EXTENSION_LANGUAGES else None


def language_from_label(label: str) -> str | None:
    ext = extension(label)
    return EXTENSION_LANGUAGES.get(ext) if ext else None
