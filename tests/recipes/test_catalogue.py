"""The catalogue: built-ins plus user folders, NAME@VERSION, closest names, the Stack a recipe asks for."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuenv.errors import NotFound, UsageError
from cuenv.knowledge.stack import Stack
from cuenv.recipes.catalogue import (
    Catalogue,
    RecipeError,
    builtin_dir,
    load,
    load_catalogue,
    parse,
    split_ref,
)

from .conftest import VALID


@pytest.fixture
def builtin() -> Catalogue:
    return Catalogue(builtin_dir())


def test_names_are_sorted_numerically(builtin):
    names = builtin.names()
    assert names.index("cuda-11.8") < names.index("cuda-12.1") < names.index("cuda-13.0")
    for wanted in ("torch-cu118", "torch-cu121", "torch-cu124", "torch-cu126", "torch-cu128", "torch-cu130",
                   "paddle-cu118", "paddle-cu126", "tensorflow-cu125", "jax-cu12", "jax-cu13",
                   "cuda-11.8", "cuda-12.1", "cuda-12.4", "cuda-12.6", "cuda-12.8", "cuda-13.0"):
        assert wanted in names


def test_name_at_version_applies_that_versions_overrides(builtin):
    recipe, version = builtin.get("torch-cu121@2.3.1")
    assert version == "2.3.1"
    assert recipe.stack(version) == Stack(
        label="torch-cu121@2.3.1", cuda="12.1", cudnn="8.9",
        sass=("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"), ptx=(), has_nvcc=False,
        os=("linux", "windows"), framework="torch", framework_version="2.3.1", variant="cu121",
        arch_x86_only=True)  # the recipe's arch list is the x86_64 wheel's; 2.3's aarch64 one was not read
    assert recipe.install_plan(version)["venv"]["requirements"] == ["torch==2.3.1+cu121", "numpy"]  # issue 26
    assert recipe.install_plan(version)["conda"]["specs"] == ["pytorch==2.3.1", "pytorch-cuda=12.1"]
    recipe, version = builtin.get("torch-cu121")
    assert version == "2.5.1" and recipe.stack().label == "torch-cu121" and recipe.stack().cudnn == "9.1"


def test_engine_sections_limit_versions(builtin):
    recipe, _ = builtin.get("torch-cu124")
    assert recipe.engines("2.5.1") == ("conda", "venv")
    assert recipe.engines("2.6.0") == ("venv",)  # PyTorch's conda channel stopped at 2.5.1
    assert set(recipe.install_plan("2.6.0")) == {"venv"}


def test_bare_stack_nvcc_depends_on_engine(builtin):
    recipe, version = builtin.get("cuda-12.1")
    assert version is None
    assert recipe.stack(engine="venv").has_nvcc is False  # cu12 nvcc wheel: ptxas only
    assert recipe.stack(engine="conda").has_nvcc is True
    assert recipe.stack().has_nvcc is True  # unknown engine: the conservative answer
    assert recipe.install_plan()["venv"]["requirements"] == ["nvidia-cuda-runtime-cu12==12.1.105",
                                                             "nvidia-cuda-nvcc-cu12==12.1.105"]
    assert builtin.get("cuda-13.0")[0].stack(engine="venv").has_nvcc is True


def test_unsupported_version_lists_the_supported_ones(builtin):
    with pytest.raises(UsageError) as exc:
        builtin.get("torch-cu121@2.9.0")
    assert "does not support torch 2.9.0" in exc.value.message
    assert exc.value.hint == "Supported versions: 2.1.2, 2.2.2, 2.3.1, 2.4.1, 2.5.1 (default 2.5.1)."
    with pytest.raises(UsageError, match="has no framework"):
        builtin.get("cuda-12.1@12.1.1")


def test_unknown_name_gives_closest_names(builtin):
    with pytest.raises(NotFound) as exc:
        builtin.get("torch-cu12")
    assert exc.value.message == "Unknown recipe 'torch-cu12'."
    assert exc.value.hint.startswith("Closest: torch-cu1") and "torch-cu12" in exc.value.hint  # torch-cu12x, cu132
    assert exc.value.exit_code == 2
    with pytest.raises(UsageError):
        split_ref("torch-cu121@")


def test_a_built_in_name_is_the_built_in_until_the_user_writes_user_name(tmp_path, write_recipe):
    """Issue 31 §6: a user recipe with a built-in's name replaced it silently (and its smoke test ran on
    `cuenv test`). Now NAME is the built-in; user:NAME is the user's (the first folder wins among users)."""
    first, second = tmp_path / "first", tmp_path / "second"
    shadow = VALID.replace("name: demo-cu121", "name: torch-cu121").replace("A demo stack", "mine")
    write_recipe(shadow, name="torch-cu121", folder=second)
    write_recipe(shadow.replace("mine", "first wins"), name="torch-cu121", folder=first)
    write_recipe(folder=second)

    class Settings:
        recipe_dirs = (first, second, tmp_path / "missing")

    catalogue = load_catalogue(Settings())
    recipe, _ = catalogue.get("torch-cu121")
    assert recipe.origin == "builtin" and recipe.path == builtin_dir() / "torch-cu121.yaml"
    mine, version = catalogue.get("user:torch-cu121@2.5.1")
    assert (mine.summary, mine.origin, version) == ("first wins", "user", "2.5.1")
    assert catalogue.shadowed("user:torch-cu121") == [second / "torch-cu121.yaml", builtin_dir() / "torch-cu121.yaml"]
    assert catalogue.shadowed("torch-cu121") == [first / "torch-cu121.yaml", second / "torch-cu121.yaml"]
    names = catalogue.names()
    assert {"demo-cu121", "cuda-12.1", "torch-cu121", "user:torch-cu121"} <= set(names) and "user:demo-cu121" not in names
    assert catalogue.get("demo-cu121")[0].origin == "user" and catalogue.shadow_warning("demo-cu121") is None
    assert catalogue.shadow_warning("torch-cu121") == (
        f"Your recipe {first / 'torch-cu121.yaml'} has the name of the built-in recipe torch-cu121; the built-in is used. "
        "Write user:torch-cu121 to use yours, or rename it.")
    assert catalogue.shadow_warning("user:torch-cu121@2.5.1", ).startswith(f"Using your recipe {first / 'torch-cu121.yaml'}")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picked=st.lists(st.sampled_from(["cuda-12.1", "cuda-12.6", "torch-cu121", "jax-cu12", "mine-a", "mine-b"]),
                       unique=True, max_size=6))
def test_no_user_recipe_ever_replaces_a_built_in_silently(tmp_path_factory, picked):
    folder = tmp_path_factory.mktemp("r")
    for name in picked:
        (folder / f"{name}.yaml").write_text(VALID.replace("name: demo-cu121", f"name: {name}"))
    catalogue = Catalogue(builtin_dir(), (folder,))
    for name in picked:
        builtin = (builtin_dir() / f"{name}.yaml").exists()
        assert catalogue.find(name).origin == ("builtin" if builtin else "user")
        assert (catalogue.shadow_warning(name) is not None) == builtin
        if builtin:
            assert catalogue.find("user:" + name).path == folder / f"{name}.yaml"


def test_a_fifo_or_folder_named_like_a_recipe_is_one_warning(cli, tmp_path, write_recipe):
    import os

    folder = tmp_path / "mine"
    write_recipe(folder=folder)
    os.mkfifo(folder / "fifo.yaml")
    writer = os.open(folder / "fifo.yaml", os.O_RDWR)  # a reader that blocked would wait forever
    (folder / "dir.yaml").mkdir()
    try:
        code, out, err = cli("--recipes", str(folder), "recipes")
    finally:
        os.close(writer)
    assert code == 0 and "demo-cu121*" in out and "cuda-12.1 " in out and "torch-cu121 " in out
    assert err.count("warning:") == 2
    assert "fifo.yaml is a FIFO (named pipe), not a regular file" in err and "dir.yaml is a folder" in err


def test_cli_flags_a_shadowing_recipe_in_recipes_show_and_create(cli, tmp_path, write_recipe):
    folder = tmp_path / "mine"
    write_recipe(VALID.replace("name: demo-cu121", "name: cuda-12.1").replace("A demo stack", "MINE"), name="cuda-12.1",
                 folder=folder)
    code, out, err = cli("recipes", environ={**os.environ, "CUENV_RECIPES": str(folder)})
    assert code == 0 and "user:cuda-12.1*" in out and "user:cuda-12.1: yours, with a built-in's name (cuda-12.1 is the built-in)" in out
    assert "has the name of the built-in recipe cuda-12.1; the built-in is used" in err
    code, out, err = cli("--recipes", str(folder), "recipes", "show", "cuda-12.1")
    assert code == 0 and "MINE" not in out and "the built-in is used" in err
    code, out, err = cli("--recipes", str(folder), "recipes", "show", "user:cuda-12.1")
    assert code == 0 and "MINE" in out and "Using your recipe" in err
    env = {**os.environ, "CUENV_DRIVER": "550.54.15"}
    code, out, err = cli("--recipes", str(folder), "create", "cuda-12.1", "-n", "x", "--dry-run", environ=env)
    assert code == 0 and "the built-in is used. Write user:cuda-12.1 to use yours" in err


def test_broken_user_recipe_is_a_two_line_error(tmp_path, write_recipe):
    write_recipe(VALID.replace('cuda: "12.1"', 'cuda: "12.x"'), folder=tmp_path / "r")
    with pytest.raises(RecipeError) as exc:
        Catalogue(builtin_dir(), (tmp_path / "r",)).get("demo-cu121")
    assert ':7: cuda: "12.x" is not a valid CUDA version' in exc.value.message
    assert exc.value.hint.startswith("Run `cuenv recipes lint ")


def test_content_hash_ignores_formatting_not_values():
    base = parse(VALID, stem="demo-cu121")
    reformatted = parse("# a comment\n" + VALID.replace('sass: ["8.0", "9.0"]', 'sass:\n    - "8.0"\n    - "9.0"'),
                        stem="demo-cu121")
    changed = parse(VALID.replace('cudnn: "9.1"', 'cudnn: "9.2"'), stem="demo-cu121")
    assert base.content_hash() == reformatted.content_hash() != changed.content_hash()
    assert base.content_hash().startswith("sha256:") and len(base.content_hash()) == 7 + 64


def test_cli_recipes_table_and_user_marker(cli, tmp_path, write_recipe):
    write_recipe(folder=tmp_path / "mine")
    code, out, _ = cli("recipes", "--recipes", str(tmp_path / "mine"))
    assert code == 0
    header = out.splitlines()[0].split()
    assert header[:5] == ["NAME", "FRAMEWORK", "CUDA", "CUDNN", "MIN"]
    assert any(line.startswith("demo-cu121*") for line in out.splitlines())
    code, out, _ = cli("recipes", "list", "--json")
    rows = {r["name"]: r for r in json.loads(out)["recipes"]}
    assert rows["torch-cu128"]["cc"] == "7.5-12.0" and rows["torch-cu130"]["cc"] == "7.5-12.0 +PTX 12.0"
    assert rows["cuda-12.1"]["engines"] == ["conda", "venv"]


def test_cli_show_json_and_errors(cli):
    code, out, _ = cli("recipes", "show", "jax-cu12@0.4.38", "--json")
    data = json.loads(out)
    assert code == 0 and data["label"] == "jax-cu12@0.4.38" and data["stack"]["cudnn"] == "9.1"
    assert data["install"] == {"venv": {"index_urls": [], "requirements": ["jax[cuda12]==0.4.38"], "nvcc": False}}
    assert data["content_hash"].startswith("sha256:")
    code, _, err = cli("recipes", "show", "pytorch-cu121")
    assert code == 2 and err.startswith("error: Unknown recipe 'pytorch-cu121'.\nhint: Closest: torch-cu121")
    code, out, _ = cli("recipes", "show", "cuda-12.1")
    assert code == 0 and "require    nvidia-cuda-runtime-cu12==12.1.105" in out and "(ships nvcc)" in out


def test_cli_list_survives_a_broken_user_recipe(cli, tmp_path, write_recipe):
    write_recipe(VALID.replace('cuda: "12.1"', "cuda: 12.1"), folder=tmp_path / "mine")
    code, out, err = cli("recipes", "--recipes", str(tmp_path / "mine"))
    assert code == 0 and "torch-cu121" in out and "demo-cu121" not in out
    assert err.startswith("warning: Recipe ") and "expected a string, got a number" in err


def test_only_shipped_recipes_are_kept_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shipped recipe's checked data is kept (cuenv.shipped); a recipe anywhere else, even in a
    catalogue's "builtin" folder, is read and linted every time."""
    import sys

    from cuenv import shipped

    kept = tmp_path / "kept"
    monkeypatch.setattr(shipped, "cache_file", lambda path: kept / path.name)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    first = load(builtin_dir() / "torch-cu121.yaml")
    assert (kept / "torch-cu121.yaml").is_file()
    assert load(builtin_dir() / "torch-cu121.yaml") == first
    other = tmp_path / "r"
    other.mkdir()
    (other / "torch-cu121.yaml").write_text((builtin_dir() / "torch-cu121.yaml").read_text())
    Catalogue(other).get("torch-cu121")
    (other / "torch-cu121.yaml").write_text("name: [broken\n")
    with pytest.raises(RecipeError):
        Catalogue(other).get("torch-cu121")
    assert sorted(p.name for p in kept.iterdir()) == ["torch-cu121.yaml"]


def test_a_broken_link_in_a_user_folder_hides_only_itself(tmp_path: Path) -> None:
    """A recipe link that loops or dangles is listed, and refused with why, not called unknown; the
    others still load."""
    user = tmp_path / "r"
    user.mkdir()
    (user / "loop.yaml").symlink_to(user / "loop.yaml")
    (user / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    catalogue = Catalogue(builtin_dir(), (user,))
    assert {"loop", "gone"} <= set(catalogue.names())
    for name in ("loop", "gone"):
        with pytest.raises(RecipeError, match="(Cannot read recipe file|does not exist)"):
            catalogue.find(name)
    broken: list[RecipeError] = []
    assert "torch-cu121" in [r.name for r in catalogue.all(broken)]
    assert len(broken) == 2
