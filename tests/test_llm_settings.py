"""Model settings as an operator writes them: environment variables over townbot.toml."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from townbot.cli import main, model_line
from townbot.llm.settings import LOCAL_DUMMY_KEY, SettingsError, load_settings, setting_names

NO_FILE = Path("/nonexistent/townbot.toml")


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "townbot.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_with_nothing_configured_the_offline_model_is_used_and_says_so():
    settings = load_settings({}, NO_FILE)
    assert settings.offline
    line = model_line(settings)
    assert "offline model" in line and "not a language model" in line


def test_the_first_line_names_the_models_actually_configured():
    settings = load_settings({"TOWNBOT_CHAT_MODEL": "qwen2.5:7b", "TOWNBOT_SMALL_MODEL": "qwen2.5:1.5b",
                              "TOWNBOT_BASE_URL": "http://localhost:11434/v1/",
                              "TOWNBOT_EMBEDDING_MODEL": "nomic-embed-text"}, NO_FILE)
    line = model_line(settings)
    assert "qwen2.5:7b at http://localhost:11434/v1" in line
    assert "qwen2.5:1.5b for importance" in line
    assert "embeddings nomic-embed-text" in line and "json_schema" in line
    assert "offline" not in line


def test_the_file_gives_settings_and_the_environment_overrides_it(tmp_path):
    config = write_config(tmp_path, """
[llm]
chat_model = "llama3.1:8b"
base_url = "http://localhost:11434/v1"
timeout = 30
concurrency = 2

[llm.prices]
prompt = 0.5

[llm.budget]
calls_per_day = 1000
""")
    settings = load_settings({"TOWNBOT_CONCURRENCY": "1"}, config)
    assert (settings.chat_model, settings.timeout, settings.concurrency) == ("llama3.1:8b", 30.0, 1)
    assert settings.prices.prompt == 0.5 and settings.caps.calls_per_day == 1000
    assert settings.api_key == LOCAL_DUMMY_KEY, "a local server gets a dummy key the client accepts"


def test_townbot_config_points_at_another_file(tmp_path):
    config = write_config(tmp_path, '[llm]\nchat_model = "m"\nbase_url = "http://127.0.0.1:8000/v1"\n')
    assert load_settings({"TOWNBOT_CONFIG": str(config)}).chat_model == "m"
    with pytest.raises(SettingsError, match="TOWNBOT_CONFIG.*no such file"):
        load_settings({"TOWNBOT_CONFIG": str(tmp_path / "missing.toml")})


@pytest.mark.parametrize(("env", "expected"), [
    ({"TOWNBOT_TIMEOUT": "soon"}, r"TOWNBOT_TIMEOUT='soon' is not a number; use e\.g\. TOWNBOT_TIMEOUT=60"),
    ({"TOWNBOT_CONCURRENCY": "0"}, r"TOWNBOT_CONCURRENCY='0' is out of range 1 to 1024"),
    ({"TOWNBOT_STRUCTURED_OUTPUT": "xml"},
     r"TOWNBOT_STRUCTURED_OUTPUT='xml'.*json_schema, json_object, prompt"),
    ({"TOWNBOT_BASE_URL": "localhost:11434"}, r"TOWNBOT_BASE_URL='localhost:11434' is not a URL"),
    ({"TOWNBOT_MAX_CALLS_PER_DAY": "lots"}, r"TOWNBOT_MAX_CALLS_PER_DAY='lots' is not a whole number"),
])
def test_a_bad_value_names_the_setting_and_what_would_work(env, expected):
    with pytest.raises(SettingsError, match=expected):
        load_settings({"TOWNBOT_CHAT_MODEL": "m", "TOWNBOT_BASE_URL": "http://h/v1", **env}, NO_FILE)


def test_a_misspelt_key_in_the_file_gets_a_suggestion(tmp_path):
    config = write_config(tmp_path, '[llm]\nchat_modle = "gpt-4o-mini"\n')
    with pytest.raises(SettingsError, match=r"unknown setting 'chat_modle' \(did you mean 'chat_model'\?\)"):
        load_settings({}, config)


def test_a_broken_file_is_named(tmp_path):
    config = write_config(tmp_path, "[llm\nchat_model = 1\n")
    with pytest.raises(SettingsError, match="townbot.toml: not valid TOML"):
        load_settings({}, config)


def test_openai_needs_a_key_and_takes_openai_api_key():
    with pytest.raises(SettingsError, match=r"TOWNBOT_API_KEY \(or OPENAI_API_KEY\) is not set"):
        load_settings({"TOWNBOT_CHAT_MODEL": "gpt-4o-mini"}, NO_FILE)
    settings = load_settings({"TOWNBOT_CHAT_MODEL": "gpt-4o-mini", "OPENAI_API_KEY": "sk-test"}, NO_FILE)
    assert settings.api_key == "sk-test" and settings.base_url == "https://api.openai.com/v1"


def test_an_embedding_model_without_a_chat_model_is_refused():
    with pytest.raises(SettingsError, match="TOWNBOT_EMBEDDING_MODEL is set but TOWNBOT_CHAT_MODEL is not"):
        load_settings({"TOWNBOT_EMBEDDING_MODEL": "nomic-embed-text"}, NO_FILE)


def test_sim_with_a_bad_setting_stops_before_touching_the_database(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TOWNBOT_TIMEOUT", "-3")
    db = tmp_path / "town.db"
    assert main(["sim", "--hours", "1", "--db", str(db)]) == 2
    assert "TOWNBOT_TIMEOUT='-3' is out of range" in capsys.readouterr().err
    assert not db.exists()


ROOT = Path(__file__).resolve().parents[1]


def recipes(page: str, first: str, last: str) -> list[str]:
    """The indented code blocks of a page between two headings: README's "Use a real model",
    docs/models.md's "Servers" and its walk-through."""
    text = (ROOT / page).read_text(encoding="utf-8")
    section = text.split(first, 1)[1].split(last, 1)[0]
    blocks, current = [], []
    for line in section.splitlines():
        if line.startswith("    ") or (current and not line.strip()):
            current.append(line[4:])
        elif current:
            blocks.append("\n".join(current).strip())
            current = []
    return blocks + ["\n".join(current).strip()] if current else blocks


@pytest.mark.parametrize(("page", "first", "last", "count", "what"), [
    ("README.md", "## Use a real model", "### What a day costs", 5,
     "OpenAI, Ollama, vLLM, llama-server, llama-cpp-python"),
    ("docs/models.md", "## Servers", "## What townbot checks", 6,
     "OpenAI, Ollama, vLLM, llama-server, LM Studio, the walk-through"),
])
def test_every_recipe_gives_working_settings(tmp_path, page, first, last, count, what):
    examples = recipes(page, first, last)
    named = [block for block in examples if block.startswith("[llm]") or "TOWNBOT_" in block]
    assert len(named) == count, what
    for block in named:
        if block.startswith("[llm]"):
            settings = load_settings({}, write_config(tmp_path, block))
        else:
            env = dict(re.findall(r"\b((?:TOWNBOT|OPENAI)_[A-Z_]+)=(\S+)", block))
            settings = load_settings(env, NO_FILE)
        assert not settings.offline, f"{page}: the example names no model:\n{block}"


def test_the_configuration_table_documents_every_setting():
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    table = text.split("## Language models", 1)[1].split("## Discord", 1)[0]
    for key, variables in setting_names():
        assert f"`{key}`" in table, key
        for variable in variables.split(" / "):
            assert f"`{variable}`" in table, variable
