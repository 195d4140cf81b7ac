"""The environment detail pane's kernels section (issue 20): pure lines from judged libraries."""

from __future__ import annotations

from cuenv.binaries.assess import Library, Run
from cuenv.tui.models import kernel_lines


def test_kernel_lines_style_each_library_by_its_worst_gpu() -> None:
    ext = Library("lib/python3.11/site-packages/myext/_C.so", "myext==0.1", ("sm_75", "sm_86"), ("compute_90",), "9.0", 1,
                  (Run("8.6", "native"), Run("8.0", "none")))
    jit = Library("lib/libjit.so", None, (), ("compute_75",), "9.0", 1, (Run("8.6", "jit", "9.0"),))
    assert kernel_lines([ext, jit]) == [
        ("bold", "Kernels in the files (2 libraries with GPU code)"),
        ("$error", "  myext/_C.so  myext==0.1"),
        ("", "    SASS sm_75 sm_86, PTX compute_90; 8.6: native; 8.0: no kernels"),
        ("$warning", "  lib/libjit.so"),
        ("", "    SASS -, PTX compute_75; 8.6: PTX JIT"),
    ]
    assert kernel_lines([]) == []
