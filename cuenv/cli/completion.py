"""Shell completions for bash, zsh and fish, generated from the parser (cuenv.cli.walk).

Pure: (command tree, baked folders) -> script text. Subcommands, options and fixed choices are written
into the script; environment names and recipe names are read from folders by the shell at TAB time
(``$CUENV_HOME/envs/*/.cuenv/complete``, ``*.yaml`` in the recipe folders), so no Python runs on TAB.
The folders in force when the script was generated are baked in; an exported CUENV_HOME or
CUENV_RECIPES wins, as it does for cuenv itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Iterable

from cuenv.activation import fish as fish_shell
from cuenv.activation import posix
from cuenv.cli.walk import Command, Option, Positional

SHELLS: Final = ("bash", "zsh", "fish")
_SAFE_WORD: Final = re.compile(r"^[\w.@:+,/=-]+$")

# What a positional argument holds, by its dest: environment names, recipe names, either, files.
_POSITIONAL_KINDS: Final = {"name": "env", "names": "env", "recipe": "recipe", "ref": "recipe",
                            "target": "target", "files": "file", "file": "file", "cmd": "cmd"}
_VALUE_KINDS: Final = {"DIR": "dir", "FILE": "file"}


@dataclass(frozen=True)
class Baked:
    """Defaults in force when the script is generated."""

    home: Path
    builtin_recipes: Path
    recipe_dirs: tuple[Path, ...]


def _words(items: Iterable[str]) -> str:
    out = [w for w in items if _SAFE_WORD.match(w)]  # parser words are plain; anything else is left out
    return " ".join(out)


def positional_kind(arg: Positional) -> str:
    if arg.choices:
        return "words:" + ",".join(c for c in arg.choices if _SAFE_WORD.match(c) and "," not in c)
    return _POSITIONAL_KINDS.get(arg.dest, "none")


def value_kind(option: Option) -> str:
    if option.choices:
        return "words:" + ",".join(c for c in option.choices if _SAFE_WORD.match(c) and "," not in c)
    return _VALUE_KINDS.get(option.metavar or "", "none")


def _pos_spec(command: Command) -> str:
    kinds = []
    for arg in command.positionals:
        kinds.append(positional_kind(arg) + ("+" if arg.many else ""))
    return " ".join(kinds)


# --------------------------------------------------------------------------- bash and zsh


_POSIX_CORE = r"""
# The folders, read at TAB time: no Python runs.
__cuenv_c_envs() {
    if [ -n "${ZSH_VERSION-}" ]; then emulate -L sh; setopt null_glob; fi
    local __m __d
    for __m in "${__cuenv_c_typed_home:-${CUENV_HOME:-$__cuenv_c_home}}"/envs/*/.cuenv/complete; do
        [ -e "$__m" ] || continue
        __d=${__m%/.cuenv/complete}
        printf '%s\n' "${__d##*/}"
    done
}
__cuenv_c_recipes() {
    if [ -n "${ZSH_VERSION-}" ]; then emulate -L sh; setopt null_glob; fi
    local IFS=: __d __f
    for __d in $__cuenv_c_typed_recipes ${CUENV_RECIPES:-$__cuenv_c_user_recipes} $__cuenv_c_builtin_recipes; do
        for __f in "$__d"/*.yaml; do
            [ -e "$__f" ] || continue
            __f=${__f##*/}
            printf '%s\n' "${__f%.yaml}"
        done
    done
}

# __cuenv_c_state WORD...: the words between `cuenv` and the one being completed. Sets
# __cuenv_c_kind (subs, env, recipe, target, file, dir, cmd, words, none) and __cuenv_c_path;
# a typed --home or --recipes counts for the names offered, as it does for the command.
__cuenv_c_state() {
    if [ -n "${ZSH_VERSION-}" ]; then emulate -L sh; fi
    local __w __skip='' __npos=0 __kind __last
    __cuenv_c_path=
    __cuenv_c_for_value=
    __cuenv_c_typed_home=
    __cuenv_c_typed_recipes=
    __cuenv_c_spec ''
    for __w in "$@"; do
        if [ -n "$__skip" ]; then
            case $__skip in
                --home) __cuenv_c_typed_home=$__w ;;
                --recipes) __cuenv_c_typed_recipes=${__cuenv_c_typed_recipes:+$__cuenv_c_typed_recipes:}$__w ;;
            esac
            __skip=
            continue
        fi
        case $__w in
            --) if [ -n "$__cuenv_c_path" ]; then __cuenv_c_kind=cmd; return 0; fi ;;
            --*=*) continue ;;
            -*) case " $__cuenv_c_valued " in *" $__w "*) __skip=$__w ;; esac; continue ;;
        esac
        case " $__cuenv_c_subs " in
            *" $__w "*) __cuenv_c_path=${__cuenv_c_path:+$__cuenv_c_path }$__w; __npos=0
                        __cuenv_c_spec "$__cuenv_c_path"; continue ;;
        esac
        __npos=$((__npos + 1))
    done
    if [ -n "$__skip" ]; then
        __cuenv_c_for_value=1
        __cuenv_c_value "$__cuenv_c_path" "$__skip"
        return 0
    fi
    if [ -n "$__cuenv_c_subs" ] && [ "$__npos" -eq 0 ]; then __cuenv_c_kind=subs; return 0; fi
    __kind=none
    __last=
    # shellcheck disable=SC2086 # split on purpose: one kind per positional argument
    set -- $__cuenv_c_pos
    while [ "$#" -gt 0 ]; do
        __last=$1
        if [ "$__npos" -eq 0 ]; then __kind=$1; break; fi
        __npos=$((__npos - 1))
        shift
    done
    if [ "$#" -eq 0 ]; then
        case $__last in *+) __kind=$__last ;; esac
    fi
    __kind=${__kind%+}
    case $__kind in
        words:*) __cuenv_c_words=$(printf '%s' "${__kind#words:}" | tr , ' '); __cuenv_c_kind=words ;;
        *) __cuenv_c_kind=$__kind ;;
    esac
    return 0
}
"""


def _posix_tables(tree: Command) -> str:
    spec = ["__cuenv_c_spec() {", "    case $1 in"]
    values = ["__cuenv_c_value() {", "    __cuenv_c_kind=none", "    case \"$1|$2\" in"]
    global_values: list[str] = []
    for command in tree.walk():
        key = posix.quote(" ".join(command.path))
        subs = _words(s.path[-1] for s in command.subcommands)
        opts = _words(command.flags())
        valued = _words(f for o in command.options if o.metavar for f in o.flags)
        spec.append(f"        {key}) __cuenv_c_subs={posix.quote(subs)}; __cuenv_c_opts={posix.quote(opts)}; "
                    f"__cuenv_c_valued={posix.quote(valued)}; __cuenv_c_pos={posix.quote(_pos_spec(command))} ;;")
        for option in command.options:
            kind = value_kind(option) if option.metavar else "none"
            if kind == "none" or (option.is_global and command.path):
                continue
            pattern = "|".join("*" + posix.quote("|" + f) if option.is_global
                               else posix.quote(" ".join(command.path) + "|" + f) for f in option.flags)
            if kind.startswith("words:"):
                words = kind[len("words:"):].replace(",", " ")
                line = f"        {pattern}) __cuenv_c_kind='words'; __cuenv_c_words={posix.quote(words)} ;;"
            else:
                line = f"        {pattern}) __cuenv_c_kind='{kind}' ;;"
            (global_values if option.is_global else values).append(line)
    spec += ["        *) __cuenv_c_subs=''; __cuenv_c_opts=''; __cuenv_c_valued=''; __cuenv_c_pos='' ;;", "    esac", "}"]
    values += global_values + ["    esac", "}"]
    return "\n".join(spec + values) + "\n"


def _header(shell: str, baked: Baked, version: str) -> str:
    q = fish_shell.quote if shell == "fish" else posix.quote
    user = (" ".join(q(str(p)) for p in baked.recipe_dirs) if shell == "fish"
            else q(":".join(map(str, baked.recipe_dirs))))
    assign = (lambda n, v: f"set -g {n} {v}") if shell == "fish" else (lambda n, v: f"{n}={v}")
    lines = [
        f"# cuenv {version} completion for {shell}: generated by `cuenv completion {shell}` from the parser.",
        assign("__cuenv_c_home", q(str(baked.home))),
        assign("__cuenv_c_user_recipes", user).rstrip(),
        assign("__cuenv_c_builtin_recipes", q(str(baked.builtin_recipes))),
    ]
    return "\n".join(lines) + "\n"


_BASH_MAIN = r"""
# shellcheck disable=SC2207 # IFS is a newline below: one candidate per line, none holds one
_cuenv() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    COMPREPLY=()
    __cuenv_c_state "${COMP_WORDS[@]:1:COMP_CWORD-1}"
    local IFS=$'\n'  # candidates are one per line from here on
    if [[ $cur == -* && $__cuenv_c_kind != cmd && -z $__cuenv_c_for_value ]]; then
        COMPREPLY=($(IFS=' '; compgen -W "$__cuenv_c_opts" -- "$cur"))
        return 0
    fi
    case $__cuenv_c_kind in
        subs) COMPREPLY=($(IFS=' '; compgen -W "$__cuenv_c_subs" -- "$cur")) ;;
        words) COMPREPLY=($(IFS=' '; compgen -W "$__cuenv_c_words" -- "$cur")) ;;
        env) COMPREPLY=($(compgen -W "$(__cuenv_c_envs)" -- "$cur")) ;;
        recipe) COMPREPLY=($(compgen -W "$(__cuenv_c_recipes)" -- "$cur")) ;;
        target) COMPREPLY=($(compgen -W "$(__cuenv_c_envs; __cuenv_c_recipes)" -- "$cur")) ;;
        dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")) ;;
        file) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")) ;;
        cmd) COMPREPLY=($(compgen -c -- "$cur")) ;;
    esac
    return 0
}
complete -F _cuenv cuenv
"""

_ZSH_MAIN = r"""
_cuenv() {
    local -a cands
    local cur=${words[CURRENT]}
    __cuenv_c_state "${(@)words[2,CURRENT-1]}"
    if [[ $cur == -* && $__cuenv_c_kind != cmd && -z $__cuenv_c_for_value ]]; then
        cands=(${=__cuenv_c_opts}); compadd -a cands; return
    fi
    case $__cuenv_c_kind in
        subs) cands=(${=__cuenv_c_subs}); compadd -a cands ;;
        words) cands=(${=__cuenv_c_words}); compadd -a cands ;;
        env) cands=(${(f)"$(__cuenv_c_envs)"}); compadd -a cands ;;
        recipe) cands=(${(f)"$(__cuenv_c_recipes)"}); compadd -a cands ;;
        target) cands=(${(f)"$(__cuenv_c_envs; __cuenv_c_recipes)"}); compadd -a cands ;;
        dir) _files -/ ;;
        file) _files ;;
        cmd) _command_names -e ;;
    esac
}
if [ "${funcstack[1]-}" = "_cuenv" ]; then
    _cuenv "$@"  # autoloaded from a file named _cuenv in $fpath
else
    compdef _cuenv cuenv
fi
"""


def bash(tree: Command, baked: Baked, version: str) -> str:
    return _header("bash", baked, version) + _POSIX_CORE + _posix_tables(tree) + _BASH_MAIN


def zsh(tree: Command, baked: Baked, version: str) -> str:
    return "#compdef cuenv\n" + _header("zsh", baked, version) + _POSIX_CORE + _posix_tables(tree) + _ZSH_MAIN


# --------------------------------------------------------------------------- fish

_FISH_CORE = r"""
function __cuenv_c_envs
    set -l home $__cuenv_c_home
    set -q CUENV_HOME; and test -n "$CUENV_HOME"; and set home $CUENV_HOME
    set -l typed (__cuenv_c_typed --home)
    test -n "$typed[-1]"; and set home $typed[-1]
    for m in $home/envs/*/.cuenv/complete
        string replace -r '/\.cuenv/complete$' '' -- $m | string replace -r '.*/' ''
    end
end

function __cuenv_c_recipes
    set -l dirs $__cuenv_c_user_recipes
    set -q CUENV_RECIPES; and test -n "$CUENV_RECIPES"; and set dirs (string split : -- $CUENV_RECIPES)
    for f in (__cuenv_c_typed --recipes)/*.yaml $dirs/*.yaml $__cuenv_c_builtin_recipes/*.yaml
        string replace -r '.*/' '' -- $f | string replace -r '\.yaml$' ''
    end
end

# The values typed for an option (`--home DIR`, `--home=DIR`), in order.
function __cuenv_c_typed
    set -l words (commandline -opc)
    set -l take 0
    for w in $words
        if test $take = 1
            printf '%s\n' $w
            set take 0
        else if test "$w" = $argv[1]
            set take 1
        else if string match -q -- "$argv[1]=*" $w
            string replace -- "$argv[1]=" '' $w
        end
    end
end

# The command path typed so far ("", "create", "recipes show"): the leading words that are subcommands.
function __cuenv_c_path
    set -l words (commandline -opc)
    set -e words[1]
    set -l path
    set -l skip 0
    for w in $words
        if test $skip = 1
            set skip 0
            continue
        end
        switch $w
            case '--*=*'
                continue
            case '--home' '--cache-dir' '--config' '--recipes'
                set skip 1
                continue
            case '-*'
                continue
        end
        if contains -- "$w" (__cuenv_c_subs_of (string join ' ' $path))
            set -a path $w
        else
            break
        end
    end
    string join ' ' $path
end

function __cuenv_c_at
    set -l path (__cuenv_c_path)
    test "$path" = "$argv"
end
"""


def _fish_subs_function(tree: Command) -> str:
    lines = ["function __cuenv_c_subs_of", "    switch \"$argv[1]\""]
    for command in tree.walk():
        if command.subcommands:
            lines.append(f"        case {fish_shell.quote(' '.join(command.path))}")
            lines.append("            printf '%s\\n' " + " ".join(fish_shell.quote(s.path[-1]) for s in command.subcommands))
    lines += ["    end", "end"]
    return "\n".join(lines) + "\n"


def _fish_lines(tree: Command) -> list[str]:
    q = fish_shell.quote
    out = ["complete -c cuenv -f"]
    for command in tree.walk():
        cond = "__cuenv_c_at " + " ".join(q(p) for p in command.path) if command.path else "__cuenv_c_at"
        for sub in command.subcommands:
            out.append(f"complete -c cuenv -n {q(cond)} -a {q(sub.path[-1])} -d {q(sub.help)}")
        for option in command.options:
            if option.is_global and command.path:
                continue  # written once, without a condition
            parts = ["complete -c cuenv"]
            if not option.is_global:
                parts.append(f"-n {q(cond)}")
            for flag in option.flags:
                parts.append(f"-l {q(flag[2:])}" if flag.startswith("--") else f"-s {q(flag[1:])}")
            if option.metavar:
                kind = value_kind(option)
                if kind.startswith("words:"):
                    parts.append("-x -a " + q(kind[len("words:"):].replace(",", " ")))
                elif kind in ("dir", "file"):
                    parts.append("-r -F" if kind == "file" else "-r -a '(__fish_complete_directories)'")
                else:
                    parts.append("-x")
            if option.help:
                parts.append(f"-d {q(option.help)}")
            out.append(" ".join(parts))
        kinds = {positional_kind(p) for p in command.positionals}
        for kind in sorted(kinds):
            if kind.startswith("words:"):
                out.append(f"complete -c cuenv -n {q(cond)} -a {q(kind[len('words:'):].replace(',', ' '))}")
            elif kind in ("env", "recipe", "target"):
                source = {"env": "(__cuenv_c_envs)", "recipe": "(__cuenv_c_recipes)",
                          "target": "(__cuenv_c_envs; __cuenv_c_recipes)"}[kind]
                out.append(f"complete -c cuenv -n {q(cond)} -a {q(source)}")
            elif kind == "file":
                out.append(f"complete -c cuenv -n {q(cond)} -F")
            elif kind == "cmd":
                after = cond + "; and contains -- -- (commandline -opc)"
                out.append(f"complete -c cuenv -n {q(after)} -a '(__fish_complete_command)'")
    return out


def fish(tree: Command, baked: Baked, version: str) -> str:
    return (_header("fish", baked, version) + _FISH_CORE + _fish_subs_function(tree) + "\n"
            + "\n".join(_fish_lines(tree)) + "\n")


def render(shell: str, tree: Command, baked: Baked, version: str) -> str:
    return {"bash": bash, "zsh": zsh, "fish": fish}[shell](tree, baked, version)
