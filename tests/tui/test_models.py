"""The TUI's data layer, without a terminal: rows, filter, sort, activation lines, hand-off."""

from __future__ import annotations

import ast
from pathlib import Path

from cuenv.activation.plan import plan_for
from cuenv.activation.target import ActivationTarget, CudaLayout
from cuenv.knowledge.findings import Finding
from cuenv.machine.model import Driver, Gpu, Machine
from cuenv.tui import models

REPO = Path(__file__).resolve().parents[2]


def _row(name, cuda="12.1", size=1, status="ok", framework="-"):
    return models.EnvRow(name=name, recipe="r", engine="venv", cuda=cuda, cudnn="-", framework=framework,
                         size_bytes=size, status=status, reason="")


def test_models_and_services_import_no_textual():
    for module in ("models.py", "services.py"):
        tree = ast.parse((REPO / "cuenv" / "tui" / module).read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert not [n for n in names if n.startswith("textual")], module


def test_machine_summary_groups_identical_gpus():
    m = Machine(driver=Driver("550.54.14", "12.4", "nvml"),
                gpus=(Gpu(0, "NVIDIA H100 80GB HBM3", "9.0", 81559), Gpu(1, "NVIDIA H100 80GB HBM3", "9.0", 81559),
                      Gpu(2, "NVIDIA T4", "7.5", 15360)))
    s = models.machine_summary(m)
    assert s == models.MachineSummary("driver 550.54.14", "CUDA <= 12.4",
                                      ("2x NVIDIA H100 80GB HBM3 (cc 9.0, 80 GiB)", "NVIDIA T4 (cc 7.5, 15 GiB)"))
    assert models.machine_summary(Machine(driver=None)).line == "no NVIDIA driver | no GPU"


def test_env_row_from_meta():
    from cuenv.activation.target import CudaLayout
    from cuenv.envs.meta import EnvMeta, RecipeRef
    from cuenv.knowledge.stack import Stack

    meta = EnvMeta(name="train", recipe=RecipeRef("torch-cu121", "2.5.1"), engine="rattler",
                   stack=Stack(label="train", cuda="12.1", cudnn="9.1", framework="torch", framework_version="2.5.1"),
                   layout=CudaLayout(prefix=Path("/e/train"), kind="conda"), size_bytes=2_500_000_000)
    row = models.env_row(meta, "train", "warning", "driver-minor-compat")
    assert row.cells() == ("train", "torch-cu121@2.5.1", "rattler", "12.1 (nominal)", "9.1 (nominal)", "torch 2.5.1",
                           "2.5 GB", "warning (driver-minor-compat)")
    # what was installed wins over the recipe's nominal versions (issue 17 §3)
    meta = meta.replace(resolved={"libcudart": "12.9.79", "cudnn": "9.28.0.50"})
    assert models.env_row(meta, "train", "ok", "").cells()[3:5] == ("12.9", "9.28.0.50")
    assert models.env_row(None, "bare", "incomplete", "").cells()[1:7] == ("-", "-", "-", "-", "-", "-")


def test_filter_matches_every_word_in_any_column():
    rows = [_row("alpha", "12.1"), _row("beta", "11.8", framework="torch 2.5.1"), _row("gamma", "12.4", status="error")]
    assert [r.name for r in models.filter_rows(rows, "")] == ["alpha", "beta", "gamma"]
    assert [r.name for r in models.filter_rows(rows, "TORCH")] == ["beta"]
    assert [r.name for r in models.filter_rows(rows, "12. error")] == ["gamma"]
    assert models.filter_rows(rows, "nothing") == []


def test_sort_by_version_size_and_status():
    rows = [_row("a", "12.10", 5), _row("b", "12.4", None, "error"), _row("c", "9.2", 7, "warning"), _row("d", "-", 1)]
    assert [r.name for r in models.sort_rows(rows, "cuda")] == ["c", "b", "a", "d"]  # 12.10 after 12.4, "-" last
    assert [r.name for r in models.sort_rows(rows, "size")] == ["d", "a", "c", "b"]
    assert [r.name for r in models.sort_rows(rows, "status")] == ["a", "d", "c", "b"]
    assert [r.name for r in models.sort_rows(rows, "name", reverse=True)] == ["d", "c", "b", "a"]
    assert models.sort_rows(rows, None) == rows


def test_cursor_after_a_refresh_stays_on_its_name_or_the_nearest_row():
    assert models.cursor_after(["a", "new", "b", "c"], "b", 1) == 2  # a row added above: follow the name
    assert models.cursor_after(["a", "c"], "b", 1) == 1  # b removed: the row that took its place
    assert models.cursor_after(["a", "b"], "c", 2) == 1  # the last row removed: the one above it
    assert models.cursor_after(["a"], None, 0) == 0
    assert models.cursor_after([], "a", 3) == 0


def test_activation_lines_show_what_use_changes(tmp_path: Path):
    home = tmp_path / "home"
    prefix = home / "envs" / "x"
    layout = CudaLayout(prefix=prefix, kind="venv", bin_dirs=(prefix / "bin",), lib_dirs=(prefix / "lib",),
                        cuda_home=None)
    plan = plan_for(ActivationTarget("x", layout, {"CUDA_MODULE_LOADING": "LAZY"}), envs_dir=home / "envs")
    old = {"PATH": "/usr/local/cuda-11.8/bin:/usr/bin", "CUDA_HOME": "/usr/local/cuda-11.8", "CONDA_PREFIX": "/c"}
    lines = models.activation_lines(old, plan, home)
    assert lines == (
        models.ActivationLine("PATH", "prepend", "$CUENV_HOME/envs/x/bin", ("/usr/local/cuda-11.8/bin",)),
        models.ActivationLine("LD_LIBRARY_PATH", "prepend", "$CUENV_HOME/envs/x/lib"),
        models.ActivationLine("VIRTUAL_ENV", "set", "$CUENV_HOME/envs/x"),
        models.ActivationLine("CUENV_ACTIVE", "set", "x"),
        models.ActivationLine("CUDA_MODULE_LOADING", "set", "LAZY"),
        models.ActivationLine("CUDA_HOME", "unset", ""),
        models.ActivationLine("CONDA_PREFIX", "unset", ""),
    )


def test_detail_text_lists_findings_with_fixes_and_packages():
    d = models.EnvDetail(name="x", path="$CUENV_HOME/envs/x", recipe="cuda-12.1", engine="venv", python="3.11",
                         complete=True, packages=(models.PackageLine("nvidia-cuda-runtime-cu12", "12.1.105", "pypi"),),
                         activation=(models.ActivationLine("PATH", "prepend", "/a:/b", ("/old",)),),
                         lock_hash="sha256:" + "ab" * 32, lock_status="n/a",
                         findings=(Finding("driver-too-old", "error", "CUDA 12.1 needs driver >= 525.", "Update it."),),
                         smoke_test=True)
    lines = models.detail_text(d)
    assert ("$error", "  error: CUDA 12.1 needs driver >= 525.") in lines
    assert ("", "    fix: Update it.") in lines
    assert ("", "  PATH += /a") in lines and ("", "          /b") in lines and ("$warning", "    drops /old") in lines
    assert ("", "  solution sha256:abababababababab... (.cuenv/solution.json)") in lines
    assert lines[-1] == ("", "  nvidia-cuda-runtime-cu12 12.1.105 (pypi)")


def test_recipe_mark():
    assert models.recipe_mark([]) == ("runs", "", "")
    assert models.recipe_mark([Finding("arch-ptx-jit", "warning", "w"), Finding("driver-too-old", "error", "e")]) == \
        ("no", "driver-too-old", "e")


def test_smoke_argv():
    from cuenv.envs.meta import SmokeTest

    assert models.smoke_argv(SmokeTest(python="print(1)")) == ["python", "-c", "print(1)"]
    assert models.smoke_argv(SmokeTest(command=("nvcc", "-V"))) == ["nvcc", "-V"]
    assert models.smoke_argv(None) is None and models.smoke_argv(SmokeTest()) is None


def test_handoff_writes_the_choice_or_says_what_to_type(tmp_path: Path):
    from cuenv.commands.tui import handoff

    choice = tmp_path / "choice"
    choice.write_text("")
    assert handoff("train", choice).data == {"use": "train"}
    assert choice.read_text() == "train\n"
    result = handoff("train", None)
    assert "Run `cuenv use train`" in result.text
    assert handoff(None, choice).data == {"use": None}


def test_guarded_progress_stops_at_the_next_step():
    import threading

    import pytest

    from cuenv.engines.events import Step, Tick
    from cuenv.tui.services import CreateCancelled, guarded

    seen, cancel = [], threading.Event()
    report = guarded(seen.append, cancel)
    report(Step("solve"))
    report(Tick())  # a moment to cancel, not passed on
    cancel.set()
    with pytest.raises(CreateCancelled):
        report(Step("install"))
    assert seen == [Step("solve")]
    assert not issubclass(CreateCancelled, Exception)  # engines' `except Exception` cannot swallow it


def test_cuenv_home_is_shown_as_the_user_knows_it(monkeypatch, tmp_path) -> None:
    """Under ~ as ~/... (the default home; a user who never set CUENV_HOME never meets it, issue 30 §4),
    elsewhere as $CUENV_HOME/... (a home set on purpose)."""
    from cuenv.tui.models import shorten

    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    default = tmp_path / "me" / ".local" / "share" / "cuenv"
    assert shorten(f"{default}/envs/a", default) == "~/.local/share/cuenv/envs/a"
    assert shorten(f"{tmp_path}/big/envs/a", tmp_path / "big") == "$CUENV_HOME/envs/a"
    assert shorten(f"{tmp_path}/me2/envs/a", tmp_path / "me2") == "$CUENV_HOME/envs/a"  # a sibling of ~, not under it
