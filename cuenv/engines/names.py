"""Which engines exist: the one list of engine names, and the names the CLI and config accept."""

from __future__ import annotations

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Final


# The conda family in the order ``auto`` tries them: all three solve with libmamba, so they agree on
# results, and this is the fastest start-up first (micromamba is one static binary).
CONDA_FAMILY: Final = ("micromamba", "mamba", "conda")
ENGINE_NAMES: Final = ("conda", "mamba", "micromamba", "rattler", "venv")
CONDA_PREFIX_ENGINES: Final = (*CONDA_FAMILY, "rattler")  # the engines whose environments are conda prefixes
CHOICES: Final = ("auto", *ENGINE_NAMES)  # what --engine and the config's `engine` accept
# Where a framework recipe's wheels come from (cuenv.engines.pypiroute explains each); the first is
# the default. What --framework-index, CUENV_FRAMEWORK_INDEX and the config's `framework_index` accept.
FRAMEWORK_INDEXES: Final = ("pypi-first", "vendor-first", "pypi", "vendor")
