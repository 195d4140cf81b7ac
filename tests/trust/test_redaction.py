"""Secrets and terminal escapes (issue 31 §2, §5): one redaction function (cuenv.trust.shown.redact)
under every message, log line, JSON document and export; one escape function (terminal_safe/output)
under every string that reaches a terminal. Seen: a mirror URL with a user and token was printed by
`config show` (text and JSON), by -v/-vv, in download errors and sync messages, and written into the
requirements.txt of Dockerfile and Apptainer exports."""

from __future__ import annotations

import json
import logging
import re
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuenv.trust.shown import output, redact, redact_data, strip_credentials, terminal_safe

TOKEN = "tok3n-s3cret"
MIRROR = f"https://alice:{TOKEN}@mirror.example.org/simple"
USERINFO = st.text(alphabet=string.ascii_letters + string.digits + "-._~%!$&'()*+,;=:", min_size=1, max_size=30)
HOSTS = st.sampled_from(["mirror.example.org", "127.0.0.1:8080", "[::1]:3141", "a.b.c"])
SCHEMES = st.sampled_from(["https", "http", "git+https", "s3", "file"])
TEXT = st.text(alphabet=string.printable, max_size=30)


@given(scheme=SCHEMES, user=USERINFO, host=HOSTS, before=TEXT, after=st.sampled_from(["/simple", "", "?x=1", " and more"]))
@settings(max_examples=300, deadline=None)
def test_no_credential_survives_redaction(scheme: str, user: str, host: str, before: str, after: str) -> None:
    secret = "Zq" + user  # never a substring of the surrounding text by chance
    url = f"{scheme}://{secret}@{host}{after}"
    for text in (url, f"{before} {url} {before}", f"error: Could not download {url}: refused."):
        assert secret not in redact(text)
        assert secret not in output(text)
        assert secret not in strip_credentials(text)
        assert host in redact(text) and host in strip_credentials(text)


@given(st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_terminal_output_holds_no_control_character(text: str) -> None:
    assert not re.search("[\x00-\x1f\x7f-\x9f\u2028\u2029]", terminal_safe(text))
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]", output(text))
    if not re.search("[\x00-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069\\\\@]", text):
        assert terminal_safe(text) == text == output(text)  # plain text passes unchanged


def test_json_documents_are_redacted_throughout() -> None:
    doc = {"a": [MIRROR, {"b": f"x {MIRROR} y"}], "n": 3, "t": True}
    assert TOKEN not in json.dumps(redact_data(doc))
    assert redact_data(doc)["n"] == 3 and redact_data(doc)["t"] is True


def test_ssh_user_git_is_no_secret() -> None:
    assert redact("git+ssh://git@github.com/org/repo") == "git+ssh://git@github.com/org/repo"


@pytest.mark.parametrize("how", ["flag", "env", "config"])
@pytest.mark.parametrize("json_out", [False, True])
def test_config_show_never_prints_a_mirror_token(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  how: str, json_out: bool) -> None:
    args = ["config", "show"] + (["--json"] if json_out else [])
    if how == "flag":
        args = ["--mirror", f"pypi={MIRROR}", *args]
    elif how == "env":
        monkeypatch.setenv("CUENV_MIRRORS", f"pypi={MIRROR}")
    else:
        config = tmp_path / "config.yaml"
        config.write_text(f"mirrors:\n  pypi: {MIRROR}\n")
        monkeypatch.setenv("CUENV_CONFIG", str(config))
    code, out, err = cli(*args)
    assert code == 0, err
    assert TOKEN not in out + err
    assert "mirror.example.org/simple" in out


def test_log_lines_are_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    from cuenv.cli.main import _log_to_stderr

    _log_to_stderr(2)
    try:
        logging.getLogger("cuenv.runner").info("$ uv pip compile --default-index %s", MIRROR)
        logging.getLogger("cuenv.runner").debug("stderr: \x1b]0;title\x07 failed at %s", MIRROR)
    finally:
        _log_to_stderr(0)
    err = capsys.readouterr().err
    assert TOKEN not in err and "\x1b" not in err
    assert "https://***@mirror.example.org/simple" in err


def test_errors_and_warnings_are_redacted_and_escaped(cli, tmp_path: Path) -> None:
    """A lock whose recipe name holds escapes and whose source names a token: refused, shown safely."""
    from tests.trust.test_paths import _lock_text

    text = _lock_text("x.conda").replace("https://conda.example.org/nvidia", f"https://bob:{TOKEN}@conda.example.org/nvidia")
    lock = tmp_path / "team.lock"
    lock.write_text(text)
    code, out, err = cli("check", str(lock))
    assert code == 2 and TOKEN not in out + err and "carries credentials" in err, err


HOSTILE = "evil\nFORGED LINE\x1b]0;pwned\x07\x1b[2J\x1b]52;c;ZXZpbA==\x07\u2028x"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


@pytest.mark.parametrize(("old", "key"), [("  name: demo\n", "recipe.name"), ("  label: demo\n", "contract.label")])
def test_a_lock_whose_names_hold_control_characters_is_refused_escaped(cli, tmp_path: Path, old: str, key: str) -> None:
    from tests.trust.test_paths import _lock_text

    lock = tmp_path / "team.lock"
    lock.write_text(_lock_text("x.conda").replace(old, f"  {old.split(':')[0].strip()}: {json.dumps(HOSTILE)}\n", 1))
    for args in (("check", str(lock)), ("sync", str(lock), "-n", "x"), ("create", "x", "--from-lock", str(lock))):
        code, out, err = cli(*args)
        assert code == 2 and f"{key}: " in err, err
        assert not RAW.search(out + err) and err.count("\n") == 2


@pytest.mark.slow
def test_verbose_create_behind_a_mirror_with_a_token(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """-vv logs uv's command line and its failure; the error names the mirror: no token anywhere (~10 s)."""
    monkeypatch.setenv("CUENV_MIRRORS", f"https://pypi.org/simple=http://alice:{TOKEN}@127.0.0.1:9/simple")
    code, out, err = cli("-vv", "create", "cuda-12.1", "--engine", "venv", "-n", "x")
    assert code != 0 and "127.0.0.1:9" in err
    assert TOKEN not in out + err
