"""Names from shared files reach the terminal escaped (issue 31 §2): an archive's recipe name (kept in
the environment's metadata by `cuenv unpack`) and a lock's recipe name or contract label may hold escape
sequences (window title, clear screen, OSC 52 clipboard) and line breaks; `list`, `info` and `check`
print none of them raw."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from tests.export.exportkit import cuenv

HOSTILE = "evil\nFORGED LINE\x1b]0;pwned\x07\x1b[2J\x1b]52;c;ZXZpbA==\x07\u2028x"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def test_list_and_info_escape_a_recipe_name_from_an_archive(venv_env: str) -> None:
    meta_file = Path(os.environ["CUENV_HOME"]) / "envs" / venv_env / ".cuenv" / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta["recipe"]["name"] = HOSTILE  # what an unpacked archive's manifest may carry
    meta_file.write_text(json.dumps(meta))
    for args in (("list",), ("info", venv_env)):
        done = cuenv(*args)
        assert not RAW.search(done.stdout + done.stderr), repr(done.stdout)
        assert "FORGED LINE" in done.stdout and "\\x1b]0;pwned" in done.stdout
        assert not any(line.startswith("FORGED") for line in done.stdout.splitlines())
    done = cuenv("list", "--json")
    assert json.loads(done.stdout)["environments"][0]["recipe"] == HOSTILE  # data stays data; JSON escapes it

