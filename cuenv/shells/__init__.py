"""Shell renderers: an activation Plan as bash/zsh (posix.py) or fish (fish.py) code (STYLE.md §3).

Each renderer owns its quoting. The scripts are self-contained: an active environment defines
``__cuenv_restore`` (undo everything, exactly) and ``__cuenv_active`` (its name); the hook
(shell/cuenv.sh, shell/cuenv.fish) only finds and sources them.
"""

from __future__ import annotations

from cuenv.shells.render import SHELLS, hook_text, render, render_scripts

__all__ = ["SHELLS", "hook_text", "render", "render_scripts"]
