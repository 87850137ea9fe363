"""Names of capy's settings as the environment spells them, importable without pydantic.

The sandbox needs the secret settings' variable names on every call to strip them, and must not
pay for loading the settings model to learn them.
"""

from __future__ import annotations

ENV_PREFIX = "CAPY_"
ENV_NESTED_DELIMITER = "__"
# Fields that hold keys: masked everywhere, refused in project files (they get committed), and
# never passed to the code capy runs. A nested field is dotted: "llm.api_key".
SECRET_FIELDS = frozenset({"db_key", "vault_key", "capsules_key", "llm.api_key"})


def env_name(field: str) -> str:
    """`db_key` -> CAPY_DB_KEY; `llm.api_key` -> CAPY_LLM__API_KEY."""
    return ENV_PREFIX + ENV_NESTED_DELIMITER.join(field.split(".")).upper()


def secret_env_names() -> frozenset[str]:
    return frozenset(env_name(field) for field in SECRET_FIELDS)
