"""How the command line explains itself: grouped help with examples, and "did you mean" (issue 18).

Pure text; cuenv.cli.main owns the parser and decides when to say it.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # no `typing` at run time: `cuenv --help` prints from here (issue 29)
if TYPE_CHECKING:
    from typing import Final, Iterable, Mapping

# title -> commands, in the order of `cuenv --help`. Every visible command is in one group (a test
# holds this to cuenv.cli.spec.COMMANDS); internal commands (shell-env) are in none.
GROUPS: Final = (
    ("This machine and the recipes", ("info", "recipes", "check", "suggest", "doctor")),
    ("Environments", ("create", "adopt", "list", "run", "test", "remove", "tui")),
    ("Change an environment", ("add", "install", "upgrade", "uninstall")),
    ("This shell", ("use", "deactivate", "shell-init", "init", "allow", "deny")),
    ("Reproduce and ship", ("lock", "sync", "export", "image", "pack", "unpack")),
    ("cuenv itself", ("config", "completion")),
)

EXAMPLES: Final = """\
examples:
  cuenv suggest torch                  the torch build for this machine, with the reasoning
  cuenv create cuda-12.1 --dry-run     what would be downloaded, with sizes
  cuenv create torch-cu121             build it (Ctrl-C stops at once and leaves nothing half-built)
  cuenv run torch-cu121 -- python -c 'import torch; print(torch.cuda.is_available())'
  eval "$(cuenv shell-init bash)"; cuenv use torch-cu121
  cuenv tui                            browse environments and recipes

`cuenv create --help` (any command's --help) lists its options. -v shows the commands cuenv runs and their
output, -vv also debug details; -q prints only errors and what was asked for.
"""


# Commands whose Ctrl-C leaves finished downloads in the cache, so that the same command resumes.
RESUMABLE: Final = frozenset({"create", "sync"})


def interrupted_hint(command: str | None, argv: Iterable[str]) -> str | None:
    """After Ctrl-C: how to go on, for a command that downloads (None for the others)."""
    words = list(argv)
    if command not in RESUMABLE or "--dry-run" in words:
        return None
    import shlex

    return (f"Nothing half-built was kept, and what finished downloading stays in the cache: "
            f"`{shlex.join(['cuenv', *words])}` again resumes from there.")


def close_matches(word: str, choices: Iterable[str], *, n: int = 3) -> list[str]:
    """The choices ``word`` was probably meant to be (a typo, a transposition, a missing dash)."""
    import difflib  # only on an error: start-up does not pay for it

    pool = list(dict.fromkeys(choices))
    found = difflib.get_close_matches(word, pool, n=n, cutoff=0.6)
    if not found and word.startswith("-"):  # --jsn -> --json: compare without the dashes too
        bare = {c.lstrip("-"): c for c in pool}
        found = [bare[m] for m in difflib.get_close_matches(word.lstrip("-"), list(bare), n=n, cutoff=0.6)]
    return found


# Words other tools use for a cuenv command (conda activate, pixi shell ...): said before spelling guesses,
# which found `deactivate` for `activate` (issue 30 §4).
SYNONYMS: Final = {"activate": "use", "shell": "use", "env": "list", "envs": "list", "rm": "remove",
                   "delete": "remove", "freeze": "lock"}


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' Did you mean X?' (or ' ... X or Y?'), or '' when nothing is close."""
    choices = list(choices)
    if SYNONYMS.get(word) in choices:
        return f" Did you mean {SYNONYMS[word]}?"
    found = close_matches(word, choices)
    return f" Did you mean {' or '.join(found)}?" if found else ""


_INVALID_CHOICE: Final = re.compile(r"invalid choice: '?([^'\s]+)'?")


def invalid_choice(message: str) -> str | None:
    """The word of argparse's "invalid choice: 'x' (choose from ...)" message, if that is the message."""
    match = _INVALID_CHOICE.search(message)
    return match.group(1) if match else None


def command_help(commands: Mapping[str, str]) -> str:
    """The grouped command list of `cuenv --help`: ``commands`` is name -> one-line help."""
    width = max(len(name) for _, names in GROUPS for name in names) + 2
    out = []
    for title, names in GROUPS:
        out.append(f"{title}:")
        out += [f"  {name:<{width}}{commands[name]}" for name in names if name in commands]
        out.append("")
    return "\n".join(out)
