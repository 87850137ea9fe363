"""The five configuration layers as pydantic-settings sources, lowest precedence first."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsError,
    TomlConfigSettingsSource,
)
from pydantic_settings.sources.utils import parse_env_vars

from capy.config import paths
from capy.config.errors import ConfigError, toml_syntax_error, unreadable_file
from capy.config.names import env_name
from capy.config.settings import ENV_NESTED_DELIMITER, ENV_PREFIX

DEFAULT_LABEL = "default"


class TomlFileSource(TomlConfigSettingsSource):
    """One TOML file; a syntax error becomes a located `ConfigError` instead of a traceback."""

    def _read_file(self, file_path: Path) -> dict[str, Any]:  # type: ignore[override]
        from capy.userfiles import SMALL_FILE_BYTES, read_user_file

        try:
            data = read_user_file(file_path, limit=SMALL_FILE_BYTES, purpose="read").head
            return tomllib.loads(data.decode("utf-8"))
        except tomllib.TOMLDecodeError as error:
            raise toml_syntax_error(file_path, error) from None
        except (OSError, UnicodeDecodeError) as error:
            raise unreadable_file(file_path, error) from None


class MappingEnvSource(EnvSettingsSource):
    """`CAPY_*` variables read from a given mapping, so a load never depends on hidden state."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(
            self._environ, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str
        )


@dataclass(frozen=True)
class Layer:
    """One source of values, and how `capy config show` names it."""

    kind: str  # "default", "user", "project", "environment"
    source: PydanticBaseSettingsSource
    data: dict[str, Any]
    path: Path | None = None
    environ: Mapping[str, str] | None = None

    def supplies(self, key: tuple[str, ...]) -> bool:
        node: Any = self.data
        for part in key:
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return True

    def label(self, key: tuple[Any, ...]) -> str:
        """The file path, the environment variable that set `key`, or `default`."""
        if self.path is not None:
            return str(self.path)
        if self.environ is None:
            return DEFAULT_LABEL
        return env_var_for(key, self.environ)


def env_var_for(key: tuple[Any, ...], environ: Mapping[str, str]) -> str:
    """The variable that sets `key`: the exact nested name, else the nearest enclosing one."""
    by_upper = {name.upper(): name for name, value in environ.items() if value != ""}
    parts = [str(part).upper() for part in key if not isinstance(part, int)]
    for length in range(len(parts), 0, -1):
        name = ENV_PREFIX + ENV_NESTED_DELIMITER.join(parts[:length])
        if name in by_upper:
            return by_upper[name]
    return ENV_PREFIX + ENV_NESTED_DELIMITER.join(parts)


def env_decode_error(error: SettingsError, environ: Mapping[str, str]) -> ConfigError:
    """pydantic-settings failed to JSON-decode a whole section given as one variable."""
    match = re.search(r'field "(\w+)"', str(error))
    name = env_var_for((match.group(1),), environ) if match else f"a {ENV_PREFIX}* variable"
    return ConfigError(
        f"{name}: not a valid JSON object; fix it, or set single keys as "
        f"{name}{ENV_NESTED_DELIMITER}KEY variables instead"
    )


def build_layers(
    settings_cls: type[BaseSettings], root: Path, environ: Mapping[str, str]
) -> list[Layer]:
    """Defaults, user file, project files and environment, lowest precedence first."""
    defaults = InitSettingsSource(
        settings_cls,
        {"data_dir": paths.data_dir(environ), "key_dir": paths.config_dir(environ)},
    )
    layers = [Layer("default", defaults, defaults())]
    files = [("user", paths.user_config_file(environ))]
    files += [("project", path) for path in paths.project_config_files(root)]
    for kind, path in files:
        source = TomlFileSource(settings_cls, toml_file=path)
        if path.is_file():
            layers.append(Layer(kind, source, source(), path=path))
    env = MappingEnvSource(settings_cls, environ)
    layers.append(Layer("environment", env, env(), environ=environ))
    return layers


def considered_files(root: Path, environ: Mapping[str, str]) -> tuple[Path, ...]:
    """Every config file a load looks for, lowest precedence first, whether or not it exists."""
    return (paths.user_config_file(environ), *paths.project_config_files(root))


def refuse_project_secrets(layers: list[Layer], secret_keys: frozenset[str]) -> list[str]:
    """Keys in a project file would end up in version control; say so and where to put them."""
    lines = []
    for layer in layers:
        if layer.kind != "project":
            continue
        for key in sorted(key for key in secret_keys if _supplies(layer.data, key)):
            lines.append(
                f"{layer.path}: {key}: keys must not live in a project file, which may be "
                f"committed; set {env_name(key)} or put it in the user config file"
            )
    return lines


def _supplies(data: Mapping[str, Any], dotted: str) -> bool:
    """Whether `data` holds the (possibly nested, dotted) key."""
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True
