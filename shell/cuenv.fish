# cuenv shell hook for fish (issue 5). Install with:  cuenv shell-init fish | source
#
# `cuenv use NAME` sources $CUENV_HOME/envs/NAME/.cuenv/activate.fish, rendered when the
# environment was created: no Python on the common path. The validation verdict is read from
# NAME/.cuenv/verdict when it was computed for this machine's fingerprint. Anything else runs
# `command cuenv shell-env fish ...`: its output is captured first and sourced only on success.

set -g __cuenv_home_default '@CUENV_HOME@'
set -g __cuenv_auto_default '@CUENV_AUTO_ACTIVATE@'

function __cuenv_return
    return $argv[1]
end

function cuenv --description 'cuenv: named CUDA environments'
    switch "$argv[1]"
        case use
            __cuenv_use $argv[2..-1]
        case deactivate
            __cuenv_deactivate
        case tui
            __cuenv_tui $argv[2..-1]
        case allow deny  # a decision about a .cuenv file: ask about it again, and act on it now
            set -g __cuenv_pin_file ''
            command cuenv $argv; or return
            __cuenv_auto
        case remove
            __cuenv_remove $argv[2..-1]
        case '*'
            command cuenv $argv
    end
end

# `cuenv remove NAME --force` of the active environment deactivates it first (issue 17 §5), so that
# its deactivate scripts still exist; when nothing was removed (answered no, no -y without a
# terminal) the shell goes back into it. Without --force the program refuses to remove it.
function __cuenv_remove
    if set -q __cuenv_active; and contains -- --force $argv; and contains -- $__cuenv_active $argv
        set -l was $__cuenv_active
        __cuenv_deactivate
        command cuenv remove $argv; and return 0
        set -l rc $status
        set -l home $CUENV_HOME
        test -n "$home"; or set home $__cuenv_home_default
        if test -d "$home/envs/$was"
            __cuenv_use $was 2>/dev/null
        end
        return $rc
    end
    command cuenv remove $argv
end

function __cuenv_py
    set -l script (command cuenv shell-env fish $argv); or return $status
    printf '%s\n' $script | source
end

function __cuenv_use
    set -l strict
    set -l name
    for arg in $argv
        switch $arg
            case --strict
                set strict --strict
            case --off
                __cuenv_deactivate
                return
            case -h --help
                command cuenv use --help
                return
            case '-*'
                __cuenv_py use $argv
                return
            case '*'
                if test -n "$name"
                    __cuenv_py use $argv
                    return
                end
                set name $arg
        end
    end
    set -l from_file
    if test -z "$name"
        __cuenv_find_project --no-ask  # a new or changed file: `shell-env use` below reads it, once
        set name $__cuenv_pname
        set from_file 1
    end
    set -l home "$CUENV_HOME"
    test -n "$home"; or set home $__cuenv_home_default
    set -l dir "$home/envs/$name/.cuenv"
    # system:X.Y, no .cuenv file, a bad name or no rendered script: the program answers
    if string match -qr -- '\A[A-Za-z0-9][A-Za-z0-9._-]*\z' "$name"; and test -f "$dir/complete"; and test -r "$dir/activate.fish"
        __cuenv_verdict $dir $name "$strict"; or return 1
        source "$dir/activate.fish"
        return 0
    end
    if test -n "$from_file"  # the program reads the .cuenv file (once) and can name it
        # its script sets the pin cache; a failure sets nothing, so the file is asked about again next time
        __cuenv_py use $strict; or begin
            set -l rc $status
            set -g __cuenv_pin_file ''
            return $rc
        end
    else
        __cuenv_py use $strict -- $name
    end
end

# `cuenv tui` hands the environment chosen with `use` back through a temporary file, the way file
# managers hand a directory back to the shell; the choice is then activated here, as `cuenv use`.
function __cuenv_tui
    set -l dir /tmp
    set -q TMPDIR; and test -n "$TMPDIR"; and set dir $TMPDIR
    set -l choice (command mktemp "$dir/cuenv-tui.XXXXXX")
    if test $status -ne 0; or test -z "$choice"  # no temporary file: the app prints the command to type
        command cuenv tui $argv
        return $status
    end
    command cuenv tui --choice-file $choice $argv
    set -l rc $status
    set -l pick
    test -s "$choice"; and read pick <"$choice"
    command rm -f -- "$choice"
    test $rc -eq 0; or return $rc
    test -n "$pick"; or return 0
    if not string match -qr -- '\A[A-Za-z0-9][A-Za-z0-9._-]*\z' "$pick"
        printf '%s\n' "cuenv: ignoring an invalid environment name from the TUI." >&2
        return 1
    end
    __cuenv_use $pick
end

function __cuenv_deactivate
    if set -q __cuenv_active
        __cuenv_restore
    else if set -q CUENV_ACTIVE
        printf '%s\n' "cuenv: $CUENV_ACTIVE was activated in a parent shell; type `exit` to leave it." >&2
    end
    return 0
end

# Same string as cuenv.fingerprint.fingerprint(): boot id, driver line, overrides.
function __cuenv_fingerprint
    set -l b -
    set -l d -
    test -r /proc/sys/kernel/random/boot_id; and read b </proc/sys/kernel/random/boot_id
    test -r /proc/driver/nvidia/version; and read d </proc/driver/nvidia/version
    set -g __cuenv_fp "$b|$d|$CUENV_DRIVER|$CUENV_GPUS|$CONDA_OVERRIDE_CUDA|$CUENV_TARGET_DRIVER|$CUENV_TARGET_GPUS"
end

# Print the cached findings; return 1 to refuse (--strict and an error).
function __cuenv_verdict -a dir name strict
    __cuenv_fingerprint
    set -l hit
    set -l err
    set -l first 1
    if test -r "$dir/verdict"
        while read line
            if test -n "$first"
                set first
                test "$line" = "$__cuenv_fp"; or break
                set hit 1
                continue
            end
            # an error that does not stop activation is said as a warning (issue 17 §4)
            if string match -q -- 'error:*' $line
                set err 1
                test -z "$strict"; and set line (string replace -- 'error:' 'warning:' $line)
            end
            printf '%s\n' $line >&2
        end <"$dir/verdict"
    end
    if test -z "$hit"
        set -l flag
        test -n "$strict"; and set flag --strict
        if not command cuenv shell-env fish verdict $flag -- $name
            test -n "$strict"; and return 1
        end
    else if test -n "$err" -a -n "$strict"
        printf '%s\n' "cuenv: not activating $name: it cannot run on this machine (--strict)." >&2
        return 1
    end
    return 0
end

# The nearest .cuenv file from $PWD up: sets __cuenv_pdir (its folder) and __cuenv_pname (its
# environment, empty until the user allowed the file with `cuenv allow`). The hook only compares: it reads
# at most 64 KiB + 1 of the file with fish's own `read`, and asks `cuenv shell-env fish pin FILE` only
# when the file found or its content differs from last time (keyed on the content, not the mtime; with
# --no-ask, `cuenv use` asks its own program instead). A
# path with a control character (a newline in a folder's name) is never a pin.
function __cuenv_find_project
    set -g __cuenv_pname ''
    set -g __cuenv_pdir ''
    set -l d $PWD
    while true
        if test -f "$d/.cuenv"
            set -g __cuenv_pdir $d
            break
        end
        test "$d" = /; and return 0
        string match -q -- '/*' "$d"; or return 0
        set d (string replace -r -- '/[^/]*\z' '' "$d")
        test -n "$d"; or set d /
    end
    if string match -qr -- '[\x00-\x1f\x7f]' "$__cuenv_pdir"
        set -g __cuenv_pdir ''
        return 0
    end
    set -l f (string replace -r -- '/\z' '' "$__cuenv_pdir")/.cuenv
    set -l text ''
    read -z --nchars 65537 text <"$f" 2>/dev/null
    if test "$f" != "$__cuenv_pin_file"; or test "$text" != "$__cuenv_pin_text"
        set -g __cuenv_pin_file $f
        set -g __cuenv_pin_text "$text"
        set -g __cuenv_pin_name ''
        # `cuenv use` asks no separate question: its one `shell-env use` reads the file and, when allowed,
        # sets __cuenv_pin_name as this would (one Python start, one read of the pin; issue 24 §4)
        if test "$argv[1]" != --no-ask
            set -l script (command cuenv shell-env fish pin -- "$f"); and printf '%s\n' $script | source
        end
    end
    set -g __cuenv_pname "$__cuenv_pin_name"
    return 0
end

# Auto-activation (opt-in): entering a tree with a .cuenv file activates its environment,
# leaving it restores the shell, unless the user switched to something else meanwhile.
function __cuenv_auto
    set -l on (string lower -- "$CUENV_AUTO_ACTIVATE")
    test -n "$on"; or set on $__cuenv_auto_default
    contains -- $on 0 false no off; and return 0
    __cuenv_find_project
    if test -n "$__cuenv_pname"
        if test "$__cuenv_active" != "$__cuenv_pname"
            cuenv use $__cuenv_pname
            set -g __cuenv_auto_env "$__cuenv_active"
        end
    else if test -n "$__cuenv_auto_env"
        test "$__cuenv_active" = "$__cuenv_auto_env"; and __cuenv_deactivate
        set -g __cuenv_auto_env ''
    end
    return 0
end

set -l __cuenv_on (string lower -- "$CUENV_AUTO_ACTIVATE")
test -n "$__cuenv_on"; or set __cuenv_on $__cuenv_auto_default
if not contains -- $__cuenv_on 0 false no off
    function __cuenv_auto_on_pwd --on-variable PWD
        __cuenv_auto
    end
    __cuenv_auto
end
