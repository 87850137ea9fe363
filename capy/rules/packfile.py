"""One pack or overlay file: read, parsed strictly, header checked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capy import __version__
from capy.rules.diagnostics import Diagnostic, Locatable, with_frame
from capy.rules.positions import Loaded, Position
from capy.userfiles import FileTooLargeError, UserFileError, read_user_file

# ruamel.yaml (through capy.rules.yamlload) and packaging are imported where a file is parsed
# or a header checked: a rule set read back from the compiled-rules cache needs neither.

OVERLAY_SCHEMA = "overlay.v1"


@dataclass(frozen=True)
class PackFile(Locatable):
    """A parsed file. `origin` says where it came from: shipped, user, project or path."""

    file: str
    text: str
    loaded: Loaded
    origin: str

    @property
    def data(self) -> dict[str, Any]:
        return self.loaded.data

    @property
    def name(self) -> str:
        return str(self.data.get("pack", ""))

    @property
    def schema(self) -> str:
        return str(self.data.get("schema", ""))

    @property
    def is_overlay(self) -> bool:
        return self.schema == OVERLAY_SCHEMA

    def locate(self, path: tuple, key: bool = False) -> tuple[str, Position]:
        return self.file, self.loaded.position_of(path, key=key)


def display_path(path: Path, origin: str) -> str:
    """Short, stable names: shipped packs as `rules/NAME.yaml`, others relative or with `~`."""
    if origin == "shipped":
        return f"rules/{path.name}"
    resolved = path.absolute()
    try:
        return str(resolved.relative_to(Path.cwd()))
    except ValueError:
        pass
    home = Path.home()
    try:
        return "~/" + str(resolved.relative_to(home))
    except ValueError:
        return str(resolved)


def read_pack_file(text: str, file: str, origin: str) -> tuple[PackFile | None, list[Diagnostic]]:
    """Parse strictly; a file that cannot be parsed yields one located diagnostic and no pack."""
    if "\x00" in text:
        return None, [
            Diagnostic(
                file,
                1,
                1,
                "not-text",
                "file contains NUL bytes; it is not a YAML pack",
                hint="rule packs are UTF-8 YAML text files",
            )
        ]
    from capy.rules.yamlload import YamlLoadError, load_yaml

    try:
        loaded = load_yaml(text)
    except YamlLoadError as exc:
        diagnostic = Diagnostic(
            file, exc.position.line, exc.position.column, exc.code, exc.message, hint=exc.hint
        )
        return None, [with_frame(diagnostic, text)]
    if not isinstance(loaded.data, dict):
        return None, [
            Diagnostic(
                file,
                1,
                1,
                "wrong-type",
                "a pack must be a YAML mapping at the top level",
                hint="start the file with `pack: NAME`",
            )
        ]
    return PackFile(file, text, loaded, origin), []


def read_path(path: Path, origin: str) -> tuple[PackFile | None, list[Diagnostic]]:
    from capy.rules.yamlload import MAX_PACK_BYTES, too_large_error

    file = display_path(path, origin)
    try:
        raw = read_user_file(path, limit=MAX_PACK_BYTES, purpose="read").head
    except FileTooLargeError as exc:
        too_big = too_large_error(exc.size)
        return None, [Diagnostic(file, 1, 1, too_big.code, too_big.message, hint=too_big.hint)]
    except OSError as exc:
        reason = exc.reason if isinstance(exc, UserFileError) else exc.strerror
        return None, [
            Diagnostic(
                file,
                1,
                1,
                "unreadable",
                f"cannot read the file: {reason}",
                hint="check the path and its permissions",
            )
        ]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return None, [
            Diagnostic(
                file, line, 1, "not-text", "file is not valid UTF-8", hint="save the pack as UTF-8"
            )
        ]
    return read_pack_file(text, file, origin)


def header_diagnostics(pack: PackFile, known_schemas: list[str]) -> list[Diagnostic]:
    """Problems the schema cannot express: an unknown schema name, an unmet `requires`."""
    found: list[Diagnostic] = []
    schema = pack.data.get("schema")
    if isinstance(schema, str) and schema not in known_schemas:
        found.append(
            pack.at(
                ("schema",),
                "unknown-schema",
                f"unknown schema {schema!r}",
                "known schemas: " + ", ".join(known_schemas),
            )
        )
    requires = pack.data.get("requires")
    if isinstance(requires, str):
        found.extend(_requires_diagnostics(pack, requires))
    return found


def _requires_diagnostics(pack: PackFile, requires: str) -> list[Diagnostic]:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import Version

    try:
        spec = SpecifierSet(requires)
    except InvalidSpecifier:
        return [
            pack.at(
                ("requires",),
                "bad-value",
                f"requires {requires!r} is not a version specifier",
                'write it like ">=0.1" or ">=0.2,<2"',
            )
        ]
    running = Version(__version__)
    if spec.contains(running, prereleases=True):
        return []
    return [
        pack.at(
            ("requires",),
            "needs-newer-capy",
            f"pack {pack.name!r} needs capy {requires}; this is capy {running}",
            "upgrade capy (pip install -U capy-mcp, or pipx upgrade capy-mcp) or use an older "
            "version of the pack",
        )
    ]
