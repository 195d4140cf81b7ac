"""The command-line conventions of mature tools (issue 18): did-you-mean, the subcommand's help in
errors, grouped help with examples, internal commands hidden, -q/-v that do what --help says,
progress that shows bytes, a TLS hint, NO_COLOR/FORCE_COLOR."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuenv.cli import usage
from cuenv.cli.progress import Progress
from cuenv.cli.spec import COMMANDS, visible_commands
from cuenv.engines.base import DownloadFailed, tls_hint
from cuenv.engines.events import Chunk, Download, Downloaded, Output, Step, Tick
from cuenv.engines.progress import Transfers, clock, human_bytes, summary
from cuenv.engines.venv import uv_event


# -- did you mean, and which help --------------------------------------------------------------------
def test_a_mistyped_command_gets_a_suggestion_not_a_list(cli):
    code, out, err = cli("craete")
    assert code == 2 and out == ""
    assert err == "error: Unknown command 'craete'. Did you mean create?\nhint: Run `cuenv --help` for the commands.\n"


def test_a_mistyped_flag_points_at_the_subcommands_help(cli):
    code, _, err = cli("list", "--jsn")
    assert code == 2
    assert err == "error: Unrecognized argument: --jsn. Did you mean --json?\nhint: Run `cuenv list --help` for usage.\n"


def test_a_mistyped_choice_names_the_likely_one(cli):
    code, _, err = cli("create", "cuda-12.1", "--engine", "cnda")
    assert code == 2 and "Did you mean conda?" in err and "`cuenv create --help`" in err


def test_an_extra_word_after_use_is_a_usage_error(cli):
    for argv in (("use", "cuda-12.1", "extra"), ("shell-env", "bash", "use", "cuda-12.1", "extra")):
        code, _, err = cli(*argv)
        assert code == 2
        assert err == "error: Unrecognized argument: extra.\nhint: Run `cuenv use --help` for usage.\n"


def test_run_without_arguments_says_how(cli):
    code, _, err = cli("run")
    assert code == 2
    assert "`cuenv run` needs an environment and a command after --." in err
    assert "NAME, -- CMD" not in err


def test_help_is_grouped_with_examples_and_hides_internal_commands(capsys):
    from cuenv.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(["--help"], environ={})
    out = capsys.readouterr().out
    assert exit_.value.code == 0
    assert "shell-env" not in out
    assert "Environments:\n  create" in out and "examples:\n  cuenv suggest torch" in out
    grouped = [n for _, names in usage.GROUPS for n in names]
    assert sorted(grouped) == sorted(visible_commands())  # every command in exactly one group
    assert len(grouped) == len(set(grouped))
    assert "shell-env" in COMMANDS


@given(st.sampled_from(sorted(visible_commands())), st.integers(min_value=0, max_value=10))
def test_a_one_letter_slip_finds_the_command(name: str, at: int):
    at %= len(name)
    typo = name[:at] + name[at + 1:] if len(name) > 3 else name + "x"
    assert name in usage.close_matches(typo, visible_commands())


@given(st.text(max_size=40))
def test_the_invalid_choice_reader_never_fails(text: str):
    found = usage.invalid_choice(text)
    assert found is None or found in text


# -- -q and -v ------------------------------------------------------------------------------------------
@pytest.mark.network
def test_quiet_create_prints_nothing_but_errors(cli, tmp_path):
    code, out, err = cli("-q", "create", "cuda-12.1", "--engine", "venv", "-n", "quiet")
    assert (code, out, err) == (0, "", "")


@pytest.mark.network
def test_verbose_create_shows_the_commands_and_uvs_lines(cli):
    code, out, err = cli("-v", "create", "cuda-12.1", "--engine", "venv", "-n", "loud")
    assert code == 0 and "Created 'loud'" in out
    assert re.search(r"^\$ \S*uv pip sync ", err, re.M), err
    # uv's own lines: its count includes pip, which the same sync installs (issue 29)
    assert re.search(r"^  \| (Installed 3 packages|Prepared|Audited)", err, re.M), err
    code, _, quiet_err = cli("create", "cuda-12.1", "--engine", "venv", "-n", "plain")
    assert "$ " not in quiet_err and "  | " not in quiet_err


@pytest.mark.network
def test_very_verbose_adds_each_commands_exit_status_and_time(cli, tmp_path):
    # a cache of its own: with the shared one, cuenv answers these exact pins from its kept solve (issue 29)
    environ = dict(os.environ, CUENV_CACHE_DIR=str(tmp_path / "cache"))
    code, _, err = cli("-vv", "create", "cuda-12.1", "--engine", "venv", "--dry-run", environ=environ)
    assert code == 0 and re.search(r"^I cuenv\.runner: \$ \S*uv pip compile ", err, re.M), err
    assert re.search(r"^D cuenv\.runner: exit 0 after \d+\.\d\d s", err, re.M), err
    code, _, once = cli("-v", "create", "cuda-12.1", "--engine", "venv", "--dry-run", environ=environ)
    assert code == 0 and "exit 0 after" not in once
    assert "answered from cuenv's cache" in once  # the second solve of the same pins starts no solver, and says so


# -- progress --------------------------------------------------------------------------------------------
def test_uv_lines_become_download_events():
    assert uv_event("Downloading nvidia-cudnn-cu12 (664.8MiB)") == Download("nvidia-cudnn-cu12", 697093324)
    assert uv_event(" Downloaded nvidia-cudnn-cu12") == Downloaded("nvidia-cudnn-cu12")
    assert uv_event("Downloading torch (1.1GiB)") == Download("torch", int(1.1 * (1 << 30)))
    assert uv_event("Prepared 21 packages in 1m 02s") is None


@given(st.text(max_size=80))
def test_any_line_of_uv_is_read_without_failing(text: str):
    found = uv_event(text)
    assert found is None or isinstance(found, (Download, Downloaded))


def test_transfers_count_bytes_rate_and_time_left():
    now = [100.0]
    t = Transfers(clock=lambda: now[0])
    t.update(Step("install", "3 packages", 300 << 20))
    t.update(Download("a", 100 << 20))
    t.update(Download("b", 200 << 20))
    now[0] += 10
    t.update(Downloaded("a"))
    assert t.done_bytes == 100 << 20 and [i.name for i in t.active] == ["b"]
    assert t.rate() == pytest.approx((100 << 20) / 10)
    assert t.eta() == pytest.approx(20.0)
    assert summary(t) == "100.0 MiB of up to 300.0 MiB, 10.0 MiB/s, about 0:20 left"
    t.update(Chunk("c", 1 << 20))
    assert t.done_bytes == 101 << 20
    assert (human_bytes(1536), clock(3725)) == ("1.5 KiB", "1:02:05")


def test_plain_progress_when_not_a_terminal():
    out = io.StringIO()
    p = Progress(out)
    p(Step("install", "2 packages", 20 << 20))
    p(Tick())
    p(Download("nvidia-cuda-nvcc-cu12", 19 << 20))
    p(Output("Downloading nvidia-cuda-nvcc-cu12 (19.1MiB)"))
    p(Downloaded("nvidia-cuda-nvcc-cu12", 19 << 20))
    lines = out.getvalue().splitlines()
    assert lines[0] == "install: 2 packages, up to 20.0 MiB to download"
    assert lines[1] == "download: nvidia-cuda-nvcc-cu12 (19.0 MiB)"
    assert lines[2].startswith("downloaded: nvidia-cuda-nvcc-cu12 [0:") and "19.0 MiB of up to 20.0 MiB" in lines[2]
    assert len(lines) == 3  # no tick, no engine line without -v, nothing rewritten
    p.done()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("environ", "colour"), [({"NO_COLOR": "1", "TERM": "xterm"}, False),
                                                 ({"FORCE_COLOR": "1", "TERM": "xterm"}, True)])
def test_no_color_and_force_color_are_honoured(environ, colour):
    out = _Tty()
    p = Progress(out, environ=environ)
    p(Step("install", "1 packages", 1 << 20))
    p(Download("x", 1 << 20))
    p.done()
    text = out.getvalue()
    assert "download" in text
    assert bool(re.search(r"\x1b\[[0-9;]*3\dm", text)) is colour  # a foreground colour code


# -- certificates ----------------------------------------------------------------------------------------
def test_a_certificate_failure_names_the_certificate_settings():
    err = DownloadFailed("https://pypi.org/simple/six/", "invalid peer certificate: UnknownIssuer")
    assert "SSL_CERT_FILE" in err.hint and "UV_NATIVE_TLS" in err.hint and "update-ca-certificates" in err.hint
    assert tls_hint("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed") is not None
    assert tls_hint("Connection refused") is None
    assert DownloadFailed("u", "Connection refused").hint == "Check the network or the channel/index URL."


# -- suggest ---------------------------------------------------------------------------------------------
def test_suggest_without_a_driver_says_it_once(cli):
    code, out, err = cli("suggest")
    text = out + err
    assert "x no-driver" not in text
    assert re.search(r"ruled out: all \d+ candidates \(no-driver\)", text), text


# -- Ctrl-C ----------------------------------------------------------------------------------------------
def test_an_interrupted_download_names_the_command_that_resumes():
    hint = usage.interrupted_hint("create", ["create", "my env", "--engine", "venv"])
    assert hint is not None and "`cuenv create 'my env' --engine venv` again resumes" in hint
    assert usage.interrupted_hint("create", ["create", "x", "--dry-run"]) is None
    assert usage.interrupted_hint("list", ["list"]) is None and usage.interrupted_hint(None, []) is None


def test_a_handled_ctrl_c_exits_130_even_when_it_left_execd_code(tmp_path):
    # CPython remembers a KeyboardInterrupt that left code run by exec() of a string (dataclasses build
    # their methods so) even once it is handled, and kills the finalizing interpreter with SIGINT. A
    # Ctrl-C landing there (seen under load in tests/envs/test_interrupt.py) must still exit 130. Run
    # with -m, as `python -m cuenv` is: a script's SystemExit ends the process before that check.
    script = tmp_path / "interrupted.py"
    script.write_text(
        "import sys\n"
        "from cuenv.cli import main as cli\n"
        "def interrupted_in_exec():\n"
        "    try:\n"
        "        exec('raise KeyboardInterrupt')\n"
        "    except KeyboardInterrupt:\n"
        "        sys.stderr.write('error: interrupted.\\n')\n"
        "        return 130\n"
        "cli.main = interrupted_in_exec\n"
        "cli.entry()\n")
    path = os.pathsep.join((str(tmp_path), str(Path(__file__).resolve().parents[1])))
    done = subprocess.run([sys.executable, "-m", "interrupted"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=path))
    assert done.returncode == 130, done
    assert done.stderr == "error: interrupted.\n"
