"""The environment-variable and configuration references cover what the code reads."""

from __future__ import annotations

import re
from pathlib import Path

from cuenv import config

REPO = Path(__file__).resolve().parents[2]
ENV_PAGE = REPO / "docs" / "reference" / "environment-variables.md"
CONFIG_PAGE = REPO / "docs" / "reference" / "configuration.md"
_VAR = re.compile(r"\bCUENV_[A-Z][A-Z0-9_]*\b")


def variables_in_code() -> set[str]:
    found: set[str] = set()
    for folder in ("cuenv", "shell"):
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".sh", ".fish", ".bash", ".zsh", ""):
                found |= set(_VAR.findall(path.read_text(encoding="utf-8", errors="replace")))
    return found


def test_every_variable_in_the_code_has_a_section() -> None:
    text = ENV_PAGE.read_text(encoding="utf-8")
    documented = set(re.findall(r"^### `(CUENV_[A-Z0-9_]+)`$", text, flags=re.M))
    found = variables_in_code()
    assert {"CUENV_HOME", "CUENV_DRIVER", "CUENV_GPUS", "CUENV_ACTIVE"} <= found  # the scan itself works
    assert found - documented == set(), "document these in docs/reference/environment-variables.md"
    assert documented - found == set(), "these are documented but nothing reads them any more"


def test_settings_name_their_flag_and_config_key() -> None:
    text = ENV_PAGE.read_text(encoding="utf-8")
    sections = dict(re.findall(r"^### `(CUENV_[A-Z0-9_]+)`\n(.*?)(?=^#|\Z)", text, flags=re.M | re.S))
    for option in config.OPTIONS:
        body = " ".join(sections[option.env].split())
        assert f"Config key `{option.name}`" in body, option.env
        if option.flag:
            assert f"Equivalent to `{option.flag}`" in body, option.env
        else:
            assert "No flag." in body, option.env


def test_configuration_page_lists_every_key() -> None:
    text = CONFIG_PAGE.read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \|", text, flags=re.M)
    assert rows == [o.name for o in config.OPTIONS]
