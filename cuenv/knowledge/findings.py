"""A finding: one verdict on a stack for a machine, and the words tables show for it.

Its own module, apart from cuenv.knowledge.stack: `list` and `use` read cached findings without
importing what a Stack needs (issue 29).
"""

from __future__ import annotations

from cuenv.plain import Plain

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Final, Iterable

SEVERITIES: Final = ("error", "warning", "info")

# Findings that say "this machine has no GPU to judge" rather than "this stack is wrong for it":
# building on a GPU-less login node or CI runner is normal (issue 4 §1), and activating there too.
NO_GPU_HERE: Final = frozenset({"no-driver", "no-gpu"})

# The one word per finding that tables show (`cuenv recipes`, the TUI), where a sentence does not fit.
REASON_WORD: Final = {
    "driver-too-old": "driver", "driver-minor-compat": "minor-compat", "arch-unsupported": "arch",
    "arch-ptx-jit": "ptx-jit", "no-driver": "no-driver", "no-gpu": "no-gpu", "cpu-only-build": "cpu-only",
    "cudnn-mismatch": "cudnn", "compiler-too-new": "compiler", "os-unsupported": "os",
    "build-unknown": "unknown", "gpu-ignored-by-driver": "driver-gpu",
}


class Finding(Plain):
    __slots__ = ("code", "severity", "message", "fix")  # the order of the dataclass it replaces (repr)

    def __init__(self, code: str, severity: str, message: str, fix: str | None = None) -> None:
        self.code = code  # stable, documented in docs/reference/findings.md
        self.severity = severity  # error | warning | info
        self.message = message  # names the numbers
        self.fix = fix

    def to_json(self) -> dict[str, str | None]:
        return {"code": self.code, "severity": self.severity, "message": self.message, "fix": self.fix}


def no_gpu_here(findings: Iterable[Finding]) -> bool:
    """True when the only errors say this machine has no driver or GPU to judge (a login node, a CI
    runner): building and activating there is normal (issue 30 §4), so it is no failure of the stack."""
    errors = {f.code for f in findings if f.severity == "error"}
    return bool(errors) and errors <= NO_GPU_HERE
