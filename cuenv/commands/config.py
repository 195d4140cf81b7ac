"""`cuenv config show`: every setting, its value and where it came from."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from cuenv.result import Result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.result import JSONObject


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("action", nargs="?", choices=["show"], default="show", help="what to do (default: show)")


class Setting:
    """One setting: its value, where it came from, and the variable that sets it (mirrors: one rule each)."""

    __slots__ = ("env", "name", "rules", "source", "value")

    def __init__(self, name: str, value: str | bool | list[str], source: str, env: str,
                 rules: list[JSONObject] | None = None) -> None:
        self.name, self.value, self.source, self.env, self.rules = name, value, source, env, rules

    def to_json(self) -> JSONObject:
        data: JSONObject = {"name": self.name, "value": self.value, "source": self.source, "env": self.env}
        if self.rules is not None:
            data["rules"] = self.rules
        return data


class Settings:
    """`cuenv config show`: ``{"settings": [{"name", "value", "source", "env"}]}`` (mirrors add ``rules``)."""

    __slots__ = ("rows",)

    def __init__(self, rows: list[Setting]) -> None:
        self.rows = rows

    def to_json(self) -> JSONObject:
        return {"settings": [r.to_json() for r in self.rows]}


def run(ctx: Context) -> Result[Settings]:
    from cuenv.config import OPTIONS

    s = ctx.settings
    rows = []
    for opt in OPTIONS:
        value = getattr(s, opt.name)
        if opt.name == "mirrors":  # one rule per upstream, each with where it came from
            rows.append(Setting(opt.name, [f"{r.upstream} -> {r.mirror}" for r in value.rules], s.sources[opt.name],
                                opt.env, rules=value.to_json()))
            continue
        shown = [str(v) for v in value] if isinstance(value, tuple) else (str(value) if not isinstance(value, bool) else value)
        rows.append(Setting(opt.name, shown, s.sources[opt.name], opt.env))
    rows.append(Setting("config_file", str(s.config_file), s.sources["config_file"], "CUENV_CONFIG"))
    return Result(Settings(rows), render)


def render(shown: Settings) -> str:
    width = max(len(r.name) for r in shown.rows)
    lines = []
    for r in shown.rows:
        if r.rules is not None:
            found = [f"{rule['upstream']} -> {rule['mirror']}  ({rule['source']})" for rule in r.rules] or ["none  (default)"]
            lines += [f"{r.name if i == 0 else '':<{width}}  {text}" for i, text in enumerate(found)]
            continue
        v = r.value
        text = ", ".join(v) if isinstance(v, list) else str(v).lower() if isinstance(v, bool) else v
        lines.append(f"{r.name:<{width}}  {text}  ({r.source})")
    return "\n".join(lines)
