"""Modulefiles strip other CUDA toolkits like `cuenv use` does (issue 17 §6).

The rules are the activation plan's (cuenv.activation.plan.dropper): any entry under a tree of
another CUDA, any entry starting with ``/usr/local/cuda-`` or ``/opt/cuda``, and the bin/lib64/lib
folders of the CUDA_HOME/CUDA_PATH in force at load time (never /usr, /usr/local, ...). They are
evaluated when the module loads, on that node's PATH and LD_LIBRARY_PATH.

Putting the old values back on unload differs by language, because Lmod 8.6 does not undo a Tcl
``pushenv`` (its tcl2lua sets the variable before Lmod records the old value; checked with Debian's
lmod 8.6.19):

* Lua (Lmod): ``pushenv(var, new value)``; Lmod's unload pops the saved value.
* Tcl (Environment Modules, or Lmod reading Tcl): ``remove-path`` for each stripped entry on load,
  the value before the load saved in ``__CUENV_MOD_<VAR>``, and on unload shell code (``puts stdout``)
  that sets the saved value again, for sh-like shells, csh and fish. Like `cuenv deactivate`, unload
  puts back the values from before the load: entries added to PATH while the module was loaded go.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Final

from cuenv.activation.plan import HOME_SUBDIRS, NEVER_STRIP, Plan

SAVED_PREFIX: Final = "__CUENV_MOD_"  # __CUENV_MOD_PATH: the value before the module loaded (Tcl)


def rules(plan: Plan) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(trees, prefixes, home variables) of the plan's strip rules."""
    def pick(kind: str) -> tuple[str, ...]:
        return tuple(r.value for r in plan.strip if r.kind == kind)

    return pick("tree"), pick("prefix"), pick("home")


def lua_lines(plan: Plan, q: Callable[[str], str]) -> list[str]:
    """Lua that sets each PATH-like variable to the environment's folders + the kept old entries."""
    trees, prefixes, homes = rules(plan)
    def table(items: Iterable[str]) -> str:
        return "{" + ", ".join(q(i) for i in items) + "}"

    lines = [
        "-- Other CUDA toolkits' entries leave PATH and LD_LIBRARY_PATH, as with `cuenv use`;",
        "-- pushenv puts the old values back on unload.",
        f"local cuenv_trees = {table(trees)}",
        f"local cuenv_prefixes = {table(prefixes)}",
        f"local cuenv_never = {{{', '.join(f'[{q(p)}] = true' for p in sorted(NEVER_STRIP))}}}",
        f"for _, var in ipairs({table(homes)}) do",
        '    local h = (os.getenv(var) or ""):gsub("/$", "")',
        '    if h:sub(1, 1) == "/" and not h:find("\\n", 1, true) and not cuenv_never[h] then',
        f"        for _, sub in ipairs({table(HOME_SUBDIRS)}) do cuenv_trees[#cuenv_trees + 1] = h .. \"/\" .. sub end",
        "    end",
        "end",
        "local function cuenv_drop(e)",
        "    for _, p in ipairs(cuenv_prefixes) do if e:sub(1, #p) == p then return true end end",
        '    for _, t in ipairs(cuenv_trees) do if e == t or e:sub(1, #t + 1) == t .. "/" then return true end end',
        "    return false",
        "end",
        "local function cuenv_path(var, dirs)",
        "    local out = {}",
        "    for _, d in ipairs(dirs) do out[#out + 1] = d end",
        '    for e in (os.getenv(var) or ""):gmatch("[^:]+") do',
        "        if not cuenv_drop(e) then out[#out + 1] = e end",
        "    end",
        '    if #out == 0 then return false end',
        '    return table.concat(out, ":")',
        "end",
    ]
    for edit in plan.paths:
        lines.append(f"pushenv({q(edit.var)}, cuenv_path({q(edit.var)}, {table(edit.prepend)}))")
    return lines


def tcl_lines(plan: Plan, q: Callable[[str], str]) -> list[str]:
    """Tcl that removes other CUDAs' entries on load and puts the saved values back on unload: of
    PATH and LD_LIBRARY_PATH, and of every variable the plan sets (Lmod's unload of a Tcl
    ``setenv`` unsets the variable, whatever it was before).

    Goes before the module's ``prepend-path`` lines and before it sets CUDA_HOME (the rule for
    CUDA_HOME reads the value in force before the load).
    """
    trees, prefixes, homes = rules(plan)
    def words(items: Iterable[str]) -> str:
        return "[list " + " ".join(q(i) for i in items) + "]"

    variables: Sequence[str] = [e.var for e in plan.paths]
    saved = [*variables, *(name for name, _ in plan.set)]
    return [
        "# Other CUDA toolkits' entries leave PATH and LD_LIBRARY_PATH, as with `cuenv use`; the values",
        "# before the load are kept in __CUENV_MOD_<VAR> and set again on unload (sh, csh and fish shells).",
        f"set cuenv_trees {words(trees)}",
        f"set cuenv_prefixes {words(prefixes)}",
        f"set cuenv_never {words(sorted(NEVER_STRIP))}",
        f"foreach cuenv_v {words(homes)} {{",
        "    if {![info exists ::env($cuenv_v)]} { continue }",
        "    regsub {/$} $::env($cuenv_v) {} cuenv_h",
        '    if {[string index $cuenv_h 0] eq "/" && [string first "\\n" $cuenv_h] < 0 && [lsearch -exact $cuenv_never $cuenv_h] < 0} {',
        f"        foreach cuenv_s {words(HOME_SUBDIRS)} {{ lappend cuenv_trees \"$cuenv_h/$cuenv_s\" }}",
        "    }",
        "}",
        "proc cuenv_drop {e} {",
        "    foreach p $::cuenv_prefixes { if {[string first $p $e] == 0} { return 1 } }",
        '    foreach t $::cuenv_trees { if {$e eq $t || [string first "$t/" $e] == 0} { return 1 } }',
        "    return 0",
        "}",
        r"""proc cuenv_sq {s} { return "'[string map {' '\\''} $s]'" }""",
        r"""proc cuenv_fq {s} { return "'[string map {\\ \\\\ ' \\'} $s]'" }""",
        "proc cuenv_restore {var value} {",
        "    switch -- [module-info shelltype] {",
        '        sh { puts stdout "$var=[cuenv_sq $value]; export $var;" }',
        '        csh { puts stdout "setenv $var [cuenv_sq $value];" }',
        '        fish { puts stdout "set -gx $var (string split : -- [cuenv_fq $value]);" }',
        "    }",
        "}",
        f"foreach cuenv_v {words(saved)} {{",
        f'    set cuenv_saved "{SAVED_PREFIX}$cuenv_v"',
        "    if {[module-info mode remove]} {",
        "        if {[info exists ::env($cuenv_saved)]} { cuenv_restore $cuenv_v $::env($cuenv_saved) }",
        "        setenv $cuenv_saved {}",
        "    } elseif {[info exists ::env($cuenv_v)]} {",
        "        setenv $cuenv_saved $::env($cuenv_v)",
        "    }",
        "}",
        f"foreach cuenv_v {words(variables)} {{",
        "    if {[module-info mode load] && [info exists ::env($cuenv_v)]} {",
        "        foreach cuenv_e [split $::env($cuenv_v) :] {",
        '            if {$cuenv_e ne "" && [cuenv_drop $cuenv_e]} { remove-path $cuenv_v $cuenv_e }',
        "        }",
        "    }",
        "}",
    ]
