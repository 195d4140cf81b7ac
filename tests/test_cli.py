from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cuenv import __version__


def test_version(cli):
    code, out, _ = cli("--version")
    assert (code, out) == (0, f"cuenv {__version__}\n")


def test_version_subprocess(cuenv_exe):
    out = subprocess.run([*cuenv_exe, "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"cuenv {__version__}"


def test_version_loads_no_parser_and_no_tui():
    """`cuenv --version` stays within 3x of `python -c pass` (issue 18) by loading almost nothing:
    counted in modules, not timed."""
    code = ("import sys; sys.argv = ['cuenv', '--version']; from cuenv.cli import entry; entry(); "
            "print(*(m in sys.modules for m in ('cuenv.cli.main', 'argparse', 'textual', 'rich')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [f"cuenv {__version__}", "False False False False"]


def test_the_console_script_is_the_light_entry():
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert 'cuenv = "cuenv.cli:entry"' in text


def test_unknown_flag_is_usage_error(cli):
    code, out, err = cli("--no-such-flag")
    assert code == 2
    assert err.startswith("error: Unrecognized argument: --no-such-flag.")
    assert "hint:" in err and "Traceback" not in err


def test_unknown_command_is_usage_error(cli):
    code, _, err = cli("frobnicate")
    assert code == 2 and err.startswith("error: ")


def test_config_show_sources(cli, tmp_path, monkeypatch):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("engine: rattler\nprompt: false\n")
    monkeypatch.setenv("CUENV_CONFIG", str(cfg))
    monkeypatch.setenv("CUENV_CACHE_DIR", str(tmp_path / "cache"))
    code, out, _ = cli("config", "show", "--json", "--home", str(tmp_path / "flag-home"))
    assert code == 0
    rows = {r["name"]: r for r in json.loads(out)["settings"]}
    assert rows["home"] == {"name": "home", "value": str(tmp_path / "flag-home"), "source": "flag --home", "env": "CUENV_HOME"}
    assert rows["cache_dir"]["source"] == "environment CUENV_CACHE_DIR"
    assert rows["engine"]["value"] == "rattler" and rows["engine"]["source"] == f"config file {cfg}"
    assert rows["prompt"]["value"] is False
    assert rows["auto_activate"]["source"] == "default"


def test_broken_config_is_clear(cli, tmp_path, monkeypatch):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("engine: [unclosed\n")
    monkeypatch.setenv("CUENV_CONFIG", str(cfg))
    code, _, err = cli("config")
    assert code == 2 and "is not valid YAML" in err and "line" in err


def test_unknown_config_key(cli, tmp_path, monkeypatch):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("engin: venv\n")
    monkeypatch.setenv("CUENV_CONFIG", str(cfg))
    code, _, err = cli("config")
    assert code == 2 and "unknown setting 'engin'" in err and "Known settings" in err


def test_bad_engine_value(cli, monkeypatch):
    monkeypatch.setenv("CUENV_ENGINE", "pip")
    code, _, err = cli("config")
    assert code == 2 and "environment CUENV_ENGINE" in err
