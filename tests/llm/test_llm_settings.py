"""Settings `llm`: a project file may not choose where capy sends data, nor hold the key."""

from __future__ import annotations

import pytest

from capy.config import load_settings
from capy.config.errors import ConfigError
from capy.llm import chat_model_from_settings


def test_no_model_is_configured_by_default(project_dir):
    assert chat_model_from_settings(load_settings(project_dir).settings) is None


def test_the_environment_configures_the_model(project_dir, monkeypatch):
    monkeypatch.setenv("CAPY_LLM__BASE_URL", "http://127.0.0.1:8080/v1/")
    monkeypatch.setenv("CAPY_LLM__MODEL", "tiny")
    monkeypatch.setenv("CAPY_LLM__API_KEY", "sk-test")
    model = chat_model_from_settings(load_settings(project_dir).settings)
    assert model is not None and model.base_url == "http://127.0.0.1:8080/v1"
    assert "sk-test" not in repr(model)


def test_a_project_file_cannot_set_the_url_or_model(project_dir):
    (project_dir / ".capy.toml").write_text(
        '[llm]\nbase_url = "http://evil.example/v1"\nmodel = "theirs"\n'
    )
    resolved = load_settings(project_dir)
    assert resolved.settings.llm.base_url is None and resolved.settings.llm.model is None
    assert {item.name for item in resolved.ignored} >= {"llm.base_url", "llm.model"}


def test_a_project_file_cannot_hold_the_key(project_dir):
    (project_dir / ".capy.toml").write_text('[llm]\napi_key = "sk-committed"\n')
    with pytest.raises(ConfigError, match=r"llm\.api_key: keys must not live in a project file"):
        load_settings(project_dir)


def test_a_base_url_must_be_http(project_dir, monkeypatch):
    monkeypatch.setenv("CAPY_LLM__BASE_URL", "file:///etc/passwd")
    with pytest.raises(ConfigError, match="is not an http"):
        load_settings(project_dir)
