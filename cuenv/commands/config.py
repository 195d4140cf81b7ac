"""`cuenv config show`: every setting, its value and where it came from."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from cuenv.result import Result, text_result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.result import Text


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("action", nargs="?", choices=["show"], default="show", help="what to do (default: show)")


def run(ctx: Context) -> Result[Text]:
    from cuenv.config import OPTIONS

    s = ctx.settings
    rows = []
    for opt in OPTIONS:
        value = getattr(s, opt.name)
        if opt.name == "mirrors":  # one rule per upstream, each with where it came from
            rows.append({"name": opt.name, "value": [f"{r.upstream} -> {r.mirror}" for r in value.rules],
                         "source": s.sources[opt.name], "env": opt.env, "rules": value.to_json()})
            continue
        shown = [str(v) for v in value] if isinstance(value, tuple) else (str(value) if not isinstance(value, bool) else value)
        rows.append({"name": opt.name, "value": shown, "source": s.sources[opt.name], "env": opt.env})
    rows.append({"name": "config_file", "value": str(s.config_file), "source": s.sources["config_file"], "env": "CUENV_CONFIG"})
    width = max(len(r["name"]) for r in rows)
    lines = []
    for r in rows:
        v = r["value"]
        if "rules" in r:
            found = [f"{rule['upstream']} -> {rule['mirror']}  ({rule['source']})" for rule in r["rules"]] or ["none  (default)"]
            lines += [f"{r['name'] if i == 0 else '':<{width}}  {text}" for i, text in enumerate(found)]
            continue
        text = ", ".join(v) if isinstance(v, list) else str(v).lower() if isinstance(v, bool) else v
        lines.append(f"{r['name']:<{width}}  {text}  ({r['source']})")
    return text_result(data={"settings": rows}, text="\n".join(lines))
