# shellcheck shell=bash
# cuenv shell hook for bash and zsh (issue 5). Install with:  eval "$(cuenv shell-init bash)"  (or zsh)
#
# `cuenv use NAME` sources $CUENV_HOME/envs/NAME/.cuenv/activate.<shell>, rendered when the
# environment was created: no Python on the common path. The validation verdict is read from
# NAME/.cuenv/verdict when it was computed for this machine's fingerprint. Anything else runs
# `command cuenv shell-env <shell> ...`, whose stdout is only shell code; nothing is evaluated
# after a failure. Builtins carry a leading backslash so user aliases cannot hijack them, and every
# function returns 0 explicitly so `set -e` shells survive.

__cuenv_home_default='@CUENV_HOME@'
__cuenv_auto_default='@CUENV_AUTO_ACTIVATE@'
if [ -n "${ZSH_VERSION-}" ]; then __cuenv_sh=zsh; else __cuenv_sh=bash; fi

cuenv() {
    if [ -n "${ZSH_VERSION-}" ]; then \builtin emulate -L zsh; fi
    case "${1-}" in
        use) \builtin shift; __cuenv_use "$@" ;;
        deactivate) __cuenv_deactivate ;;
        tui) \builtin shift; __cuenv_tui "$@" ;;
        allow | deny)  # a decision about a .cuenv file: ask about it again, and act on it now
            __cuenv_pin_file=
            __cuenv_auto_pwd=
            \command cuenv "$@" || \return
            __cuenv_auto ;;
        remove) \builtin shift; __cuenv_remove "$@" ;;
        *) \command cuenv "$@" ;;
    esac
}

# `cuenv remove NAME --force` of the active environment deactivates it first (issue 17 §5), so that
# its deactivate scripts still exist; when nothing was removed (answered no, no -y without a
# terminal) the shell goes back into it. Without --force the program refuses to remove it.
__cuenv_remove() {
    if [ -n "${__cuenv_active-}" ]; then
        __cuenv_force=
        __cuenv_hit=
        for __cuenv_a in "$@"; do
            case $__cuenv_a in
                --force) __cuenv_force=1 ;;
                *) if [ "$__cuenv_a" = "$__cuenv_active" ]; then __cuenv_hit=1; fi ;;
            esac
        done
        if [ -n "$__cuenv_force" ] && [ -n "$__cuenv_hit" ]; then
            __cuenv_was=$__cuenv_active
            __cuenv_deactivate
            \command cuenv remove "$@" && \return 0
            __cuenv_rc=$?
            if [ -d "${CUENV_HOME:-$__cuenv_home_default}/envs/$__cuenv_was" ]; then __cuenv_use "$__cuenv_was" 2>/dev/null; fi
            \return "$__cuenv_rc"
        fi
    fi
    \command cuenv remove "$@"
}

# Run the Python side; evaluate its stdout only when it succeeded.
__cuenv_py() {
    __cuenv_script="$(\command cuenv shell-env "$__cuenv_sh" "$@")" || \return
    \builtin eval "$__cuenv_script"
}

__cuenv_use() {
    __cuenv_strict=
    __cuenv_name=
    __cuenv_from_file=
    while [ "$#" -gt 0 ]; do
        case $1 in
            --strict) __cuenv_strict=1 ;;
            --off) __cuenv_deactivate; \return ;;
            -h | --help) \command cuenv use --help; \return ;;
            -*) __cuenv_py use "$@"; \return ;;  # bad flags: the program explains
            *)
                if [ -n "$__cuenv_name" ]; then __cuenv_py use "$@"; \return; fi
                __cuenv_name=$1 ;;
        esac
        \builtin shift
    done
    if [ -z "$__cuenv_name" ]; then
        __cuenv_find_project --no-ask  # a new or changed file: `shell-env use` below reads it, once
        __cuenv_name=$__cuenv_pname
        __cuenv_from_file=1
    fi
    __cuenv_dir="${CUENV_HOME:-$__cuenv_home_default}/envs/$__cuenv_name/.cuenv"
    case $__cuenv_name in
        '' | [._-]* | *[!A-Za-z0-9._-]*) ;;  # system:X.Y, no .cuenv file, or a bad name: the program answers
        *) if [ -f "$__cuenv_dir/complete" ] && [ -r "$__cuenv_dir/activate.$__cuenv_sh" ]; then
            __cuenv_verdict || \return 1
            \builtin . "$__cuenv_dir/activate.$__cuenv_sh"
            \return 0
        fi ;;
    esac
    if [ -n "$__cuenv_from_file" ]; then  # the program reads the .cuenv file (once) and can name it
        # its script sets the pin cache; a failure sets nothing, so the file is asked about again next time
        __cuenv_py use ${__cuenv_strict:+--strict} || { __cuenv_rc=$?; __cuenv_pin_file=; \return "$__cuenv_rc"; }
    else
        __cuenv_py use ${__cuenv_strict:+--strict} -- "$__cuenv_name"
    fi
}

# `cuenv tui` hands the environment chosen with `use` back through a temporary file, the way file
# managers hand a directory back to the shell; the choice is then activated here, as `cuenv use`.
__cuenv_tui() {
    __cuenv_choice="$(\command mktemp "${TMPDIR:-/tmp}/cuenv-tui.XXXXXX")" || __cuenv_choice=
    if [ -z "$__cuenv_choice" ]; then  # no temporary file: the app prints the command to type
        \command cuenv tui "$@"
        \return
    fi
    __cuenv_rc=0
    \command cuenv tui --choice-file "$__cuenv_choice" "$@" || __cuenv_rc=$?
    __cuenv_pick=
    if [ -s "$__cuenv_choice" ]; then IFS= \builtin read -r __cuenv_pick <"$__cuenv_choice" || :; fi
    \command rm -f -- "$__cuenv_choice"
    if [ "$__cuenv_rc" -ne 0 ]; then \return "$__cuenv_rc"; fi
    case $__cuenv_pick in
        '') ;;
        [._-]* | *[!A-Za-z0-9._-]*)
            \builtin printf '%s\n' "cuenv: ignoring an invalid environment name from the TUI." >&2
            \return 1 ;;
        *) __cuenv_use "$__cuenv_pick" || \return ;;
    esac
    \return 0
}

__cuenv_deactivate() {
    if [ -n "${__cuenv_active+x}" ]; then
        __cuenv_restore
    elif [ -n "${CUENV_ACTIVE-}" ]; then
        \builtin printf '%s\n' "cuenv: $CUENV_ACTIVE was activated in a parent shell; type \`exit\` to leave it." >&2
    fi
    \return 0
}

# Same string as cuenv.machine.fingerprint.fingerprint(): boot id, driver line, overrides.
__cuenv_fingerprint() {
    __cuenv_b=-
    __cuenv_d=-
    if [ -r /proc/sys/kernel/random/boot_id ]; then IFS= \builtin read -r __cuenv_b </proc/sys/kernel/random/boot_id || :; fi
    if [ -r /proc/driver/nvidia/version ]; then IFS= \builtin read -r __cuenv_d </proc/driver/nvidia/version || :; fi
    __cuenv_fp="$__cuenv_b|$__cuenv_d|${CUENV_DRIVER-}|${CUENV_GPUS-}|${CONDA_OVERRIDE_CUDA-}|${CUENV_TARGET_DRIVER-}|${CUENV_TARGET_GPUS-}"
    \return 0
}

# Print the cached findings of $__cuenv_name; return 1 to refuse (--strict and an error).
__cuenv_verdict() {
    __cuenv_fingerprint
    __cuenv_hit=
    __cuenv_err=
    if [ -r "$__cuenv_dir/verdict" ]; then
        {
            IFS= \builtin read -r __cuenv_l || :
            if [ "$__cuenv_l" = "$__cuenv_fp" ]; then
                __cuenv_hit=1
                while IFS= \builtin read -r __cuenv_l || [ -n "$__cuenv_l" ]; do
                    # an error that does not stop activation is said as a warning (issue 17 §4)
                    case $__cuenv_l in error:*)
                        __cuenv_err=1
                        if [ -z "$__cuenv_strict" ]; then __cuenv_l="warning:${__cuenv_l#error:}"; fi ;;
                    esac
                    \builtin printf '%s\n' "$__cuenv_l" >&2
                done
            fi
        } <"$__cuenv_dir/verdict"
    fi
    if [ -z "$__cuenv_hit" ]; then
        if ! \command cuenv shell-env "$__cuenv_sh" verdict ${__cuenv_strict:+--strict} -- "$__cuenv_name"; then
            if [ -n "$__cuenv_strict" ]; then \return 1; fi
        fi
    elif [ -n "$__cuenv_err" ] && [ -n "$__cuenv_strict" ]; then
        \builtin printf '%s\n' "cuenv: not activating $__cuenv_name: it cannot run on this machine (--strict)." >&2
        \return 1
    fi
    \return 0
}

# The nearest .cuenv file from $PWD up: sets __cuenv_pdir (its folder) and __cuenv_pname (its
# environment, empty until the user allowed the file with `cuenv allow`). The hook only compares: it reads
# at most 64 KiB + 1 of the file with the shell's own `read` (no process), and asks
# `cuenv shell-env SHELL pin FILE` (which reads it bounded and checks it against the approvals) only when
# the file found or its content differs from last time (with --no-ask, `cuenv use` asks its own program
# instead). Keyed on the content, not the mtime: an edit
# that keeps the old mtime is asked about again. A path with a control character (a newline in a
# folder's name) is never a pin.
__cuenv_find_project() {
    __cuenv_pname=
    __cuenv_pdir=
    __cuenv_d=$PWD
    while :; do
        if [ -f "$__cuenv_d/.cuenv" ]; then
            __cuenv_pdir=$__cuenv_d
            \builtin break
        fi
        case $__cuenv_d in /* ) ;; *) \return 0 ;; esac
        if [ "$__cuenv_d" = / ]; then \return 0; fi
        __cuenv_d=${__cuenv_d%/*}
        if [ -z "$__cuenv_d" ]; then __cuenv_d=/; fi
    done
    __cuenv_f="${__cuenv_pdir%/}/.cuenv"
    case $__cuenv_f in
        *[[:cntrl:]]*)
            __cuenv_pdir=
            \return 0 ;;
    esac
    __cuenv_text=
    if [ -n "${ZSH_VERSION-}" ]; then
        IFS= \builtin read -r -k 65537 -u 0 __cuenv_text <"$__cuenv_f" 2>/dev/null
    elif [ "${BASH_VERSINFO[0]:-4}" -ge 4 ]; then
        IFS= \builtin read -r -N 65537 __cuenv_text <"$__cuenv_f" 2>/dev/null
    else  # bash 3 (macOS) has no -N: the whole file, up to a NUL byte
        IFS= \builtin read -r -d '' __cuenv_text <"$__cuenv_f" 2>/dev/null
    fi
    if [ "$__cuenv_f" != "${__cuenv_pin_file-}" ] || [ "$__cuenv_text" != "${__cuenv_pin_text-}" ]; then
        __cuenv_pin_file=$__cuenv_f
        __cuenv_pin_text=$__cuenv_text
        __cuenv_pin_name=
        # `cuenv use` itself asks no separate question: its one `shell-env use` reads the file and, when
        # allowed, sets __cuenv_pin_name as this would (one Python start, one read of the pin; issue 24 §4)
        if [ "${1-}" != --no-ask ]; then
            __cuenv_script="$(\command cuenv shell-env "$__cuenv_sh" pin -- "$__cuenv_f")" && \builtin eval "$__cuenv_script"
        fi
    fi
    __cuenv_pname=${__cuenv_pin_name-}
    \return 0
}

# Auto-activation (opt-in): entering a tree with a .cuenv file activates its environment,
# leaving it restores the shell, unless the user switched to something else meanwhile.
__cuenv_auto() {
    if [ -n "${ZSH_VERSION-}" ]; then \builtin emulate -L zsh; fi
    case ${CUENV_AUTO_ACTIVATE:-$__cuenv_auto_default} in 0 | false | no | off | False | FALSE | No | NO | Off | OFF) \return 0 ;; esac
    if [ "$PWD" = "${__cuenv_auto_pwd-}" ]; then \return 0; fi
    __cuenv_auto_pwd=$PWD
    __cuenv_find_project
    if [ -n "$__cuenv_pname" ]; then
        if [ "${__cuenv_active-}" != "$__cuenv_pname" ]; then
            cuenv use "$__cuenv_pname" || :
            __cuenv_auto_env=${__cuenv_active-}
        fi
    elif [ -n "${__cuenv_auto_env-}" ]; then
        if [ "${__cuenv_active-}" = "$__cuenv_auto_env" ]; then __cuenv_deactivate; fi
        __cuenv_auto_env=
    fi
    \return 0
}

__cuenv_prompt_hook() {
    __cuenv_status=$?  # keep $? for the user's prompt
    __cuenv_auto
    \return "$__cuenv_status"
}

case ${CUENV_AUTO_ACTIVATE:-$__cuenv_auto_default} in
    0 | false | no | off | False | FALSE | No | NO | Off | OFF) ;;
    *)
        if [ -n "${ZSH_VERSION-}" ]; then
            \builtin autoload -Uz add-zsh-hook
            add-zsh-hook chpwd __cuenv_auto
            __cuenv_auto
        else
            case ";${PROMPT_COMMAND-};" in
                *";__cuenv_prompt_hook;"*) ;;  # registered once, even when the hook is evaluated twice
                *) PROMPT_COMMAND="__cuenv_prompt_hook${PROMPT_COMMAND:+;$PROMPT_COMMAND}" ;;
            esac
        fi ;;
esac
