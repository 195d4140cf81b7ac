"""The records `check`, `suggest` and `info` build at start-up are plain classes (cuenv.plain, issue 29):
they keep what the dataclasses they replace promised (value equality, field order, replace)."""

from __future__ import annotations

from pathlib import Path

from cuenv.knowledge.versions import Dotted
from cuenv.machine.model import Driver, Gpu, Machine
from cuenv.recipes.catalogue import Catalogue, builtin_dir


def test_machine_json_keeps_the_field_order() -> None:
    machine = Machine(Driver("550.54.14", "12.4", "flag"), (Gpu(0, "GPU 0", "8.6"),), notes=("n",))
    assert machine.to_json() == {
        "driver": {"version": "550.54.14", "max_cuda": "12.4", "source": "flag"},
        "gpus": [{"index": 0, "name": "GPU 0", "compute_capability": "8.6", "memory_mib": None, "uuid": None,
                  "architecture": None, "mig": False}],
        "os": "linux", "arch": "x86_64", "glibc": None, "notes": ["n"]}
    assert list(machine.to_json()["gpus"][0]) == list(Gpu.__slots__)
    assert machine.replace(os="windows") == Machine(machine.driver, machine.gpus, os="windows", notes=("n",))


def test_a_recipe_equals_itself_read_from_elsewhere() -> None:
    recipe = Catalogue(builtin_dir()).find("cuda-12.1")
    moved = recipe.replace(path=Path("/elsewhere/cuda-12.1.yaml"), origin="user")
    assert moved == recipe and hash(moved) == hash(recipe) and moved.path != recipe.path
    assert recipe.replace(cuda="12.2") != recipe


def test_dotted_orders_as_numbers_without_trailing_zeros() -> None:
    assert Dotted((12, 10)) > Dotted((12, 9)) >= Dotted((12, 9, 0)) and Dotted((12, 9, 0)) <= Dotted((12, 9))
    assert Dotted((12, 1)) == Dotted((12, 1, 0)) and len({Dotted((12, 1)), Dotted((12, 1, 0))}) == 1
