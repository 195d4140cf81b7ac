"""Every command's --json against the JSON Schema docs/reference/json.md documents for it (issue 24 §3),
and text and JSON rendered from one typed result, once each."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "reference" / "json.md"
REPO = Path(__file__).resolve().parents[2]
MACHINE = ("--driver", "550.54.14", "--gpu", "NVIDIA A100-SXM4-80GB")


def _schemas() -> dict[str, dict[str, Any]]:
    """heading -> the first ```json block under it ("cuenv list" -> its schema)."""
    out: dict[str, dict[str, Any]] = {}
    for section in re.split(r"^## ", DOC.read_text(encoding="utf-8"), flags=re.M)[1:]:
        heading, _, body = section.partition("\n")
        block = re.search(r"```json\n(.*?)```", body, re.S)
        if block:
            out[heading.strip()] = json.loads(block.group(1))
    return out


SCHEMAS = _schemas()


def _inline(node: Any, finding: dict[str, Any]) -> Any:
    """The schema with each {"$ref": "finding"} replaced by the common finding shape."""
    if isinstance(node, dict):
        return finding if node == {"$ref": "finding"} else {k: _inline(v, finding) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, finding) for v in node]
    return node


def _valid(heading: str, data: Any) -> None:
    schema = _inline(SCHEMAS[heading], {k: v for k, v in SCHEMAS["Common shapes"].items() if k != "$id"})
    jsonschema.validate(data, schema)


def _json(cli, *argv: str, code: int | None = 0) -> Any:
    rc, out, err = cli(*argv, "--json")
    assert code is None or rc == code, err
    return json.loads(out)


def test_every_schema_is_a_valid_json_schema():
    assert {"cuenv list", "cuenv info", "cuenv check TARGET", "cuenv doctor", "cuenv create", "cuenv lock"} <= set(SCHEMAS)
    for schema in SCHEMAS.values():
        jsonschema.Draft202012Validator.check_schema(schema)


def test_the_schemas_reject_a_wrong_shape():
    """Not schemas that accept anything: a missing key or a wrong type fails."""
    with pytest.raises(jsonschema.ValidationError):
        _valid("cuenv list", {"environment": []})
    with pytest.raises(jsonschema.ValidationError):
        _valid("cuenv check TARGET", {"target": "x", "ok": "yes", "verdict": "runs", "findings": []})
    with pytest.raises(jsonschema.ValidationError):
        _valid("cuenv doctor", {"ok": True, "origin": "report", "checks": [{"name": "driver", "status": "ok", "detail": [],
                                                                            "findings": [{"code": "x", "severity": "bad"}]}]})


def test_machine_catalogue_and_check_shapes(cli, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("CUENV_DRIVER", MACHINE[1])
    monkeypatch.setenv("CUENV_GPUS", MACHINE[3])
    _valid("cuenv list", _json(cli, "list"))
    _valid("cuenv list", _json(cli, "list", "--system"))
    _valid("cuenv info", _json(cli, "info"))
    _valid("cuenv recipes", _json(cli, "recipes"))
    _valid("cuenv recipes show", _json(cli, "recipes", "show", "cuda-12.1"))
    _valid("cuenv recipes lint", _json(cli, "recipes", "lint", str(REPO / "recipes" / "cuda-12.1.yaml")))
    _valid("cuenv check TARGET", _json(cli, "check", "cuda-12.1", *MACHINE))
    _valid("cuenv check TARGET", _json(cli, "check", "torch==2.1.0+cu121", "--driver", "450.80.02", code=1))
    _valid("cuenv check --all", _json(cli, "check", "--all"))
    _valid("cuenv suggest", _json(cli, "suggest", "torch", *MACHINE))
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("torch==2.3.1+cu121\n")
    _valid("cuenv check FILE", _json(cli, "check", str(requirements)))
    suggested = _json(cli, "suggest", "--for", str(requirements))
    _valid("cuenv suggest", suggested)
    _valid("cuenv check FILE", suggested["file"])  # the same object as `check FILE --json`
    report = REPO / "tests" / "doctor" / "fixtures" / "reports" / "collect-env-torch-cu117-gtx1050ti.txt"
    _valid("cuenv doctor", _json(cli, "doctor", "--report", str(report), code=None))
    (tmp_path / ".cuenv").write_text("env: shapes\n")
    _valid("cuenv allow, deny", _json(cli, "allow", str(tmp_path)))
    _valid("cuenv allow, deny", _json(cli, "deny", str(tmp_path)))
    _valid("cuenv init", _json(cli, "init", "bash"))
    _valid("cuenv init", _json(cli, "init", "bash", "--undo"))
    _valid("cuenv adopt --scan", _json(cli, "adopt", "--scan", str(tmp_path)))
    _valid("cuenv completion", _json(cli, "completion", "bash"))
    _valid("cuenv config", _json(cli, "config", "show"))
    from cuenv.commands.tui import handoff

    _valid("cuenv tui", handoff("shapes", None).data)
    _valid("cuenv tui", handoff(None, None).data)


@pytest.mark.network  # a real venv environment: uv and NVIDIA's wheels (the shared test cache keeps them)
def test_environment_lifecycle_shapes(cli, work: Path, monkeypatch):
    monkeypatch.setenv("CUENV_DRIVER", MACHINE[1])
    monkeypatch.setenv("CUENV_GPUS", MACHINE[3])
    _valid("cuenv create", _json(cli, "create", "cuda-12.1", "-n", "shapes", "--engine", "venv", "--dry-run"))
    created = _json(cli, "create", "cuda-12.1", "-n", "shapes", "--engine", "venv")
    _valid("cuenv create", created)
    assert {"path", "size_bytes", "nvcc"} <= set(created)
    listed = _json(cli, "list")
    _valid("cuenv list", listed)
    assert [e["name"] for e in listed["environments"]] == ["shapes"]
    _valid("cuenv info NAME", _json(cli, "info", "shapes"))
    _valid("cuenv check TARGET", _json(cli, "check", "shapes", code=None))
    _valid("cuenv check --all", _json(cli, "check", "--all", code=None))
    _valid("cuenv lock", _json(cli, "lock", "shapes", "-o", "cuenv.lock"))
    printed = _json(cli, "lock", "shapes", "-o", "-")
    _valid("cuenv lock", printed)
    assert printed["text"] == (work / "cuenv.lock").read_text()
    _valid("cuenv check FILE", _json(cli, "check", "cuenv.lock", code=None))
    _valid("cuenv lock --check", _json(cli, "lock", "--check", "shapes", "cuenv.lock"))
    _valid("cuenv sync", _json(cli, "sync", "cuenv.lock", "-n", "shapes", "-y"))
    _valid("cuenv add, upgrade, uninstall", _json(cli, "add", "-n", "shapes", "six", "--dry-run"))
    _valid("cuenv test", _json(cli, "test", "shapes", code=None))
    printed = _json(cli, "export", "shapes", "-F", "requirements")
    _valid("cuenv export", printed)
    _, text, _ = cli("export", "shapes", "-F", "requirements")
    assert printed["files"][0]["content"] == text  # the file itself on stdout, byte for byte
    _valid("cuenv export", _json(cli, "export", "shapes", "-F", "dockerfile", "-o", str(work / "image")))
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(work / "plain")], check=True)
    _valid("cuenv adopt", _json(cli, "adopt", str(work / "plain"), "-n", "plain"))
    _valid("cuenv remove", _json(cli, "remove", "shapes", "-y"))


# -- one typed result, rendered once as text and once as JSON ----------------------------------------------
class _Counted:
    """A typed result that counts how often each rendering is asked for."""

    def __init__(self) -> None:
        self.json_calls = self.text_calls = 0

    def to_json(self) -> Any:
        self.json_calls += 1
        return {"n": 1}


def _text(value: _Counted) -> str:
    value.text_calls += 1
    return "n=1"


@pytest.mark.parametrize("as_json", [False, True])
def test_the_edge_renders_one_of_the_two_once(as_json: bool, capsys):
    from cuenv.cli.main import _emit
    from cuenv.result import Result

    value = _Counted()
    _emit(Result(value, _text), as_json, quiet=False)
    out = capsys.readouterr().out
    assert (value.json_calls, value.text_calls) == ((1, 0) if as_json else (0, 1))
    assert out == ('{\n  "n": 1\n}\n' if as_json else "n=1\n")


def test_text_and_json_say_the_same_facts(cli, monkeypatch):
    """The text is rendered from the same typed result as the JSON: each recipe and its mark, each
    doctor check and its status, appear in both."""
    monkeypatch.setenv("CUENV_DRIVER", MACHINE[1])
    monkeypatch.setenv("CUENV_GPUS", MACHINE[3])
    _, text, _ = cli("recipes")
    for row in _json(cli, "recipes")["recipes"]:
        line = next(ln for ln in text.splitlines() if ln.split()[0].rstrip("*") == row["name"])
        assert row["machine"] in line and row["cuda"] in line
    report = str(REPO / "tests" / "doctor" / "fixtures" / "reports" / "collect-env-torch-cu117-gtx1050ti.txt")
    _, text, _ = cli("doctor", "--report", report)
    for check in _json(cli, "doctor", "--report", report, code=None)["checks"]:
        assert re.search(rf"^{check['status']}\s+{check['name']}$", text, re.M), check["name"]
