"""`cuenv recipes lint`: every problem, with file, key path and the line the YAML node sits on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuenv.recipes.catalogue import builtin_dir
from cuenv.recipes.lint import lint_file

from .conftest import VALID

SHIPPED = sorted(builtin_dir().glob("*.yaml"))


def _by_key(problems):
    return {p.key: p for p in problems}


def test_catalogue_is_not_empty():
    assert len(SHIPPED) >= 19


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_recipe_lints_clean(path: Path):
    assert [str(p) for p in lint_file(path)] == []


def test_valid_demo_is_clean(write_recipe):
    assert lint_file(write_recipe()) == []


def test_wrong_types_name_the_key_and_line(write_recipe):
    text = VALID.replace('cuda: "12.1"', "cuda: 12.1").replace("platforms: [linux-64]", "platforms: linux-64")
    problems = _by_key(lint_file(write_recipe(text)))
    assert problems["cuda"].line == 7 and problems["cuda"].code == "wrong-type"
    assert "expected a string, got a number; quote it: \"12.1\"" in problems["cuda"].message
    assert problems["platforms"].line == 15 and "expected a list" in problems["platforms"].message


def test_unknown_keys_get_did_you_mean(write_recipe):
    text = VALID.replace("summary:", "sumary:").replace("    requirements:", "    requirement:")
    problems = _by_key(lint_file(write_recipe(text)))
    assert problems["sumary"].line == 2 and "did you mean 'summary'" in problems["sumary"].message
    assert problems["install.venv.requirement"].line == 26
    assert "did you mean 'requirements'" in problems["install.venv.requirement"].message
    # ... and the keys they stand in for are missing, reported too (not just the first problem)
    assert problems["summary"].code == "missing" and problems["summary"].line is None  # no node: no line
    assert problems["install.venv.requirements"].code == "missing"
    assert problems["install.venv.requirements"].line == 24  # the line of `venv:`, where it belongs


def test_missing_required_fields(write_recipe):
    text = VALID.replace('  version: "2.5.1"\n', "").replace('cudnn: "9.1"\n', "")
    problems = _by_key(lint_file(write_recipe(text)))
    assert problems["framework.version"].code == "missing" and problems["framework.version"].line == 3
    assert problems["cudnn"].code == "missing" and problems["cudnn"].line is None


@pytest.mark.parametrize(("old", "new", "key", "line"), [
    ('cuda: "12.1"', 'cuda: "12.x"', "cuda", 7),
    ('sass: ["8.0", "9.0"]', 'sass: ["8.x", "9.0"]', "arch.sass[0]", 13),
    ('cudnn: "9.1"', 'cudnn: "nine"', "cudnn", 8),
    ('default: "3.11"', 'default: "3"', "python.default", 10),
    ('versions: ["2.4.1", "2.5.1"]', 'versions: ["2.4.1", "two"]', "framework.versions[1]", 6),
])
def test_bad_versions(write_recipe, old, new, key, line):
    problems = _by_key(lint_file(write_recipe(VALID.replace(old, new))))
    assert key in problems, problems
    assert problems[key].line == line
    assert problems[key].code in {"bad-version", "bad-value"}
    assert "is not a valid" in problems[key].message


def test_name_must_match_file_and_pattern(write_recipe):
    problems = _by_key(lint_file(write_recipe(VALID, name="other")))
    assert problems["name"].code == "bad-name" and problems["name"].line == 1
    assert "does not match the file name 'other.yaml'" in problems["name"].message
    bad = VALID.replace("name: demo-cu121", "name: -demo")
    problems = _by_key(lint_file(write_recipe(bad, name="-demo")))
    assert problems["name"].code == "bad-name" and "is not a valid recipe name" in problems["name"].message


def test_duplicate_keys(write_recipe):
    text = VALID.replace('cudnn: "9.1"\n', 'cudnn: "9.1"\ncudnn: "9.2"\n', 1)
    (problem,) = lint_file(write_recipe(text))
    assert (problem.key, problem.line, problem.code) == ("cudnn", 9, "duplicate-key")
    assert "first at line 8" in problem.message


def test_broken_yaml_reports_its_line(write_recipe):
    text = VALID.replace('  sass: ["8.0", "9.0"]', '  sass: ["8.0", "9.0"')
    (problem,) = lint_file(write_recipe(text))
    assert problem.code == "yaml" and problem.line in (13, 14)
    assert "not valid YAML" in problem.message


def test_semantic_rules(write_recipe):
    text = (VALID.replace('"2.4.1":', '"2.3.0":')
            .replace('version: "2.5.1"', 'version: "2.6.0"')
            .replace("NCCL_P2P_DISABLE", "LD_LIBRARY_PATH")
            .replace("+cu121", "+{variant}")
            .replace('supported: ">=3.9,<3.14"', 'supported: ">=3.12"'))
    problems = _by_key(lint_file(write_recipe(text)))
    assert problems['overrides["2.3.0"]'].line == 21 and "not one of framework.versions" in problems['overrides["2.3.0"]'].message
    assert problems["framework.version"].line == 5 and "not in framework.versions" in problems["framework.version"].message
    assert problems["env.LD_LIBRARY_PATH"].line == 17 and "dynamic loader" in problems["env.LD_LIBRARY_PATH"].message
    assert problems["install.venv.requirements[0]"].line == 27
    assert "unknown placeholder {variant}" in problems["install.venv.requirements[0]"].message
    assert problems["python.default"].line == 10 and "outside supported" in problems["python.default"].message


def test_not_a_mapping_and_missing_file(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("- just\n- a list\n")
    (problem,) = lint_file(path)
    assert problem.line == 1 and "must be a mapping" in problem.message
    (problem,) = lint_file(tmp_path / "nope.yaml")
    assert problem.code == "io" and problem.line is None


def test_cli_lint_lists_every_problem_and_exits_1(cli, write_recipe):
    text = VALID.replace('cuda: "12.1"', 'cuda: "12.x"').replace("summary:", "sumary:")
    path = write_recipe(text)
    code, out, _ = cli("recipes", "lint", str(path))
    assert code == 1
    assert f"{path}:7: cuda: \"12.x\" is not a valid CUDA version" in out
    assert f"{path}:2: sumary: unknown key 'sumary' (did you mean 'summary'?)" in out
    assert "3 problems in 1 of 1 file." in out
    code, out, _ = cli("recipes", "lint", "--json", str(path))
    data = json.loads(out)
    assert code == 1 and data["ok"] is False
    assert {"file": str(path), "key": "cuda", "line": 7, "code": "bad-version"}.items() <= data["problems"][2].items()
    assert [p["line"] for p in data["problems"]] == [None, 2, 7]  # missing summary has no node, so no line


def test_cli_lint_clean_exits_0(cli):
    code, out, _ = cli("recipes", "lint", *map(str, SHIPPED))
    assert code == 0 and out.strip() == f"{len(SHIPPED)} files clean."
