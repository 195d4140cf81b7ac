"""What the command line is: its commands and the options every command takes (issue 29).

Read by the fast path (cuenv.cli.main with cuenv.cli.quick) and by the argparse parser (cuenv.cli.parser)
alike, so neither imports the other's machinery.
"""

from __future__ import annotations

from cuenv.cli.quick import SUPPRESS

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Any

# name -> (module under cuenv.commands, one-line help). Order is the order of --help.
COMMANDS: dict[str, tuple[str, str]] = {
    "info": ("info", "show this machine (driver, GPUs, toolkits, engines), or one environment"),
    "recipes": ("recipes", "list, show and lint recipes"),
    "check": ("check", "will a recipe, environment or installed build run on this (or another) machine?"),
    "suggest": ("suggest", "the best recipe for this (or another) machine"),
    "create": ("create", "create a named environment from a recipe"),
    "adopt": ("adopt", "register an existing conda environment or venv (it is read, never changed)"),
    "list": ("list_", "list environments"),
    "remove": ("remove", "remove an environment"),
    "add": ("change", "add packages to an environment, checked against its CUDA contract first"),
    "install": ("change", "the same as `cuenv add` (conda's word)"),
    "upgrade": ("change", "upgrade packages of an environment, its CUDA pins held"),
    "uninstall": ("change", "remove packages from an environment"),
    "run": ("run", "run a command inside an environment"),
    "test": ("test", "run an environment's smoke test"),
    "use": ("use", "activate an environment in this shell (needs the shell hook)"),
    "deactivate": ("use", "undo `cuenv use` in this shell (needs the shell hook)"),
    "allow": ("allow", "allow a project's .cuenv file to activate its environment"),
    "deny": ("allow", "block a project's .cuenv file until it is allowed again"),
    "shell-init": ("shell", "print the shell hook for bash, zsh or fish"),
    "init": ("shell", "add the shell hook to your shell's rc file"),
    "lock": ("lock", "write a lockfile for an environment or a recipe"),
    "sync": ("lock", "make an environment match a lockfile"),
    "export": ("export", "export an environment (dockerfile, apptainer, lmod, tcl, explicit, ...)"),
    "image": ("image", "build a container image of an environment, or push one to a registry"),
    "pack": ("pack", "pack an environment into a relocatable archive"),
    "unpack": ("pack", "unpack an archive made by `cuenv pack`"),
    "doctor": ("doctor", "run the acceptance checks and explain each failure"),
    "tui": ("tui", "interactive terminal browser of environments and recipes"),
    "config": ("config", "show settings and where each came from"),
    "completion": ("completion", "print shell completions"),
    "shell-env": ("shell", SUPPRESS),
}


def visible_commands() -> list[str]:
    return [name for name, (_, help_text) in COMMANDS.items() if help_text != SUPPRESS]


def user_prog(prog: str) -> str:
    """What the user typed: `cuenv shell-env bash use` is the hook running `cuenv use`."""
    words = prog.split()
    if len(words) >= 2 and words[1] == "shell-env":
        return "cuenv " + (words[3] if len(words) > 3 else "use")
    return prog


def global_options(parser: Any, suppress: str = SUPPRESS) -> None:
    """The options every command takes, declared on an argparse parser or on the fast path's recorder
    (cuenv.cli.quick). Defaults are ``suppress`` (argparse.SUPPRESS: argparse tests it by identity) so
    that a flag given before or after the subcommand both count."""
    g = parser.add_argument_group("global options")
    g.add_argument("--json", action="store_true", default=suppress, help="print JSON on stdout")
    g.add_argument("--home", default=suppress, metavar="DIR", help="cuenv's home (env CUENV_HOME)")
    g.add_argument("--cache-dir", default=suppress, metavar="DIR", help="cache folder (env CUENV_CACHE_DIR)")
    g.add_argument("--config", default=suppress, metavar="FILE", help="config file (env CUENV_CONFIG)")
    g.add_argument("--recipes", action="append", default=suppress, metavar="DIR",
                   help="extra recipe folder, may repeat (env CUENV_RECIPES)")
    g.add_argument("--mirror", action="append", default=suppress, metavar="UPSTREAM=MIRROR",
                   help="fetch UPSTREAM (pypi, pytorch, conda, a channel or a URL) from MIRROR, may repeat (env CUENV_MIRRORS)")
    # Checked by cuenv.config (its one list of values), so the parser needs no import for it.
    g.add_argument("--framework-index", default=suppress, metavar="ROUTE",
                   help="where framework wheels come from: pypi-first (default), vendor-first, pypi, vendor (env CUENV_FRAMEWORK_INDEX)")
    g.add_argument("-q", "--quiet", action="store_true", default=suppress,
                   help="only errors and the output asked for: no progress, warnings or reports")
    g.add_argument("-v", "--verbose", action="count", default=suppress,
                   help="also the commands cuenv runs and their output; -vv adds debug details")
