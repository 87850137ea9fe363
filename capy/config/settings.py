"""User-level settings: knobs set per machine or per project (policy lives in rule packs)."""

from __future__ import annotations

import ipaddress
import json
import re
from contextvars import ContextVar
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from capy.config import paths
from capy.config.names import ENV_NESTED_DELIMITER as ENV_NESTED_DELIMITER
from capy.config.names import ENV_PREFIX as ENV_PREFIX
from capy.config.names import SECRET_FIELDS as SECRET_FIELDS

# The settings annotation naming which way a key may change from a project file (the vocabulary is
# in capy/trust/direction.py). A key without it is free; see `tighten_only`.
PROJECT_DIRECTION_KEY = "x-capy-project"

_HOST_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_PACK_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")


def tighten_only(direction: str) -> dict[str, str]:
    """Field metadata: a project's own config file may change this key only in `direction`
    (`fixed`, `lower`, `on`, `subset`...); a change the other way is ignored with a warning
    unless the user trusts the project (`capy trust`). It shows in the settings' JSON Schema."""
    return {PROJECT_DIRECTION_KEY: direction}


class LogLevel(StrEnum):
    DEBUG = "DEBUG"
    INFO = "INFO"
    WARNING = "WARNING"
    ERROR = "ERROR"
    CRITICAL = "CRITICAL"


def _split_list(value: Any) -> Any:
    """Accept a list, a JSON list or a comma-separated string (the usual shape of an env var)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith("["):
        return json.loads(text)
    return [item.strip() for item in text.split(",") if item.strip()]


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RulesSettings(_Section):
    extra_dirs: Annotated[tuple[Path, ...], NoDecode] = Field(
        default=(),
        description="More rule-pack overlay directories, applied after the user and project ones.",
        json_schema_extra=tighten_only("fixed"),
    )
    disabled_packs: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(),
        description="Names of shipped packs to leave out entirely (the engine may refuse some).",
        json_schema_extra=tighten_only("fixed"),
    )

    _split = field_validator("extra_dirs", "disabled_packs", mode="before")(_split_list)

    @field_validator("extra_dirs")
    @classmethod
    def _resolve_dirs(cls, dirs: tuple[Path, ...]) -> tuple[Path, ...]:
        return tuple(resolve_path(directory) for directory in dirs)

    @field_validator("disabled_packs")
    @classmethod
    def _check_pack_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            if not _PACK_NAME.match(name):
                raise ValueError(f"{name!r} is not a pack name (lowercase, like 'routing')")
        return names


class FetchSettings(_Section):
    allow_hosts: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(),
        description=(
            "Internal hosts, IP addresses or networks (CIDR) that fetches may reach even though "
            "the SSRF guard would block them."
        ),
        json_schema_extra=tighten_only("subset"),
    )
    timeout: float = Field(
        default=30.0,
        gt=0,
        le=600,
        description="Seconds before a fetch gives up.",
        json_schema_extra=tighten_only("lower"),
    )

    _split = field_validator("allow_hosts", mode="before")(_split_list)

    @field_validator("allow_hosts")
    @classmethod
    def _check_hosts(cls, hosts: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_normalise_host(host) for host in hosts)


def _normalise_host(host: str) -> str:
    text = host.strip().lower()
    if "://" in text:
        raise ValueError(f"{host!r} is a URL; give only the host name, IP address or network")
    try:
        return str(
            ipaddress.ip_network(text, strict=False) if "/" in text else ipaddress.ip_address(text)
        )
    except ValueError:
        pass
    labels = text.rstrip(".").split(".")
    if len(text) > 253 or not all(_HOST_LABEL.match(label) for label in labels):
        raise ValueError(f"{host!r} is not a host name, an IP address or a network") from None
    return text.rstrip(".")


class HooksSettings(_Section):
    guidance: bool = Field(
        default=True, description="Whether hooks add capy's one-time usage guidance for the agent."
    )
    session_start_max_bytes: int = Field(
        default=8192,
        ge=0,
        le=1_048_576,
        description="Most bytes of remembered context injected when a session starts (0: none).",
    )
    capture: bool = Field(
        default=True,
        description=(
            "Whether hooks keep capsules of prompts, tool calls, diffs, errors, responses and "
            "session boundaries (spooled, then drained into the capsule log)."
        ),
    )
    allow_commands: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(),
        description=(
            "Shell commands hooks never redirect or guide, as permission-rule patterns "
            "(`curl:*`, `make test`); added to the routing pack's escape hatches."
        ),
    )
    allow_domains: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(),
        description=(
            "Hosts whose URLs hooks let through untouched (`docs.internal`, `*.corp.example`); "
            "added to the routing pack's escape hatches."
        ),
    )

    _split = field_validator("allow_commands", "allow_domains", mode="before")(_split_list)


class RedactionSettings(_Section):
    replies: bool = Field(
        default=True,
        description=(
            "Redact secrets from everything capy returns to an agent or prints (tool replies, "
            "command output, search results). Off: replies show secrets as found and say that "
            "they were not redacted. What capy stores is redacted either way."
        ),
        json_schema_extra=tighten_only("on"),
    )


class LlmSettings(_Section):
    """An OpenAI-compatible chat API capy may use where one helps (summaries); none by default.

    A project file may not set where capy sends data (`base_url`) or to which model: a cloned
    repository could otherwise route your sessions to a server of its choosing."""

    base_url: str | None = Field(
        default=None,
        description="The API's base URL, such as http://127.0.0.1:8080/v1 (unset: no chat model).",
        json_schema_extra=tighten_only("fixed"),
    )
    model: str | None = Field(
        default=None,
        description="The model name the API is asked for.",
        json_schema_extra=tighten_only("fixed"),
    )
    api_key: SecretStr | None = Field(
        default=None, description="Bearer key for the API (CAPY_LLM__API_KEY); never stored."
    )
    timeout: float = Field(
        default=60.0,
        gt=0,
        le=600,
        description="Seconds one chat request may take.",
        json_schema_extra=tighten_only("lower"),
    )

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        text = value.strip().rstrip("/")
        if not re.match(r"^https?://[^\s/]+", text):
            raise ValueError(f"{value!r} is not an http(s) URL such as http://127.0.0.1:8080/v1")
        return text

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)


class LoadContext(BaseModel):
    """What one load resolves against; set for the duration of `load_settings`."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    root: Path
    home: Path
    sources: tuple[PydanticBaseSettingsSource, ...]


LOAD_CONTEXT: ContextVar[LoadContext | None] = ContextVar("capy_config_load", default=None)


class Settings(BaseSettings):
    """capy's resolved configuration. Build it with `capy.config.load_settings`."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=ENV_NESTED_DELIMITER,
        env_ignore_empty=True,
        extra="forbid",
        frozen=True,
        validate_default=True,
    )

    data_dir: Path = Field(
        default_factory=paths.data_dir,
        description="Where capy keeps per-project databases and archives.",
        json_schema_extra=tighten_only("fixed"),
    )
    db_path: Path | None = Field(
        default=None,
        description="The knowledge database file; unset means a file under data_dir per project.",
        json_schema_extra=tighten_only("fixed"),
    )
    vault_path: Path | None = Field(
        default=None,
        description="The session archive file; unset means a file under data_dir.",
        json_schema_extra=tighten_only("fixed"),
    )
    capsules_path: Path | None = Field(
        default=None,
        description="The capsule log file; unset means a file under data_dir.",
        json_schema_extra=tighten_only("fixed"),
    )
    db_key: SecretStr | None = Field(
        default=None,
        description="Key for the knowledge database; unset means a generated key file.",
    )
    vault_key: SecretStr | None = Field(
        default=None, description="Key for the session archive; unset means a generated key file."
    )
    capsules_key: SecretStr | None = Field(
        default=None, description="Key for the capsule log; unset means a generated key file."
    )
    key_dir: Path = Field(
        default_factory=paths.config_dir,
        description="Where generated key files (mode 0600) are kept.",
        json_schema_extra=tighten_only("fixed"),
    )
    log_level: LogLevel = Field(
        default=LogLevel.WARNING, description="Least severe log level shown."
    )
    rules: RulesSettings = Field(default_factory=RulesSettings, description="Rule-pack loading.")
    fetch: FetchSettings = Field(default_factory=FetchSettings, description="Fetching URLs.")
    hooks: HooksSettings = Field(default_factory=HooksSettings, description="Agent hooks.")
    redaction: RedactionSettings = Field(
        default_factory=RedactionSettings, description="Secrets in what capy shows."
    )
    llm: LlmSettings = Field(
        default_factory=LlmSettings, description="An optional OpenAI-compatible chat model."
    )

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_log_level(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("data_dir", "db_path", "vault_path", "capsules_path", "key_dir")
    @classmethod
    def _resolve_path(cls, value: Path | None) -> Path | None:
        return None if value is None else resolve_path(value)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        context = LOAD_CONTEXT.get()
        if context is None:
            return (init_settings, env_settings)
        return (init_settings, *context.sources)


def resolve_path(value: Path) -> Path:
    """Expand `~` and anchor a relative path at the project root of the current load."""
    context = LOAD_CONTEXT.get()
    root = context.root if context else Path.cwd()
    home = context.home if context else paths.home_dir()
    if value.parts and value.parts[0] == "~":
        value = home.joinpath(*value.parts[1:])
    elif value.parts and value.parts[0].startswith("~"):
        value = value.expanduser()
    return value if value.is_absolute() else root / value
