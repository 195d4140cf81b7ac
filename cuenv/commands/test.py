"""`cuenv test NAME`: run the recipe's smoke test inside the environment (import the framework, ask for the GPU)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from cuenv.envs.meta import TRUST_SMOKE_FLAG, SmokeTest
from cuenv.errors import EXIT_OK, EXIT_PROBLEMS, CuenvError, UsageError
from cuenv.result import Result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.envs.store import EnvRecord, Store
    from cuenv.result import JSONObject

TIMEOUT_S = 600.0


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("name", metavar="NAME", help="environment")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, metavar="S", help="give up after S seconds")
    parser.add_argument("--trust-smoke-test", action="store_true",
                        help="run a smoke test that came in an archive (`cuenv unpack`), and keep trusting it")


def smoke_argv(smoke: SmokeTest | None) -> list[str]:
    """The smoke test as argv: a python snippet runs with the environment's python."""
    argv = smoke.argv() if smoke is not None else None
    if not argv:
        raise CuenvError("This environment's recipe has no smoke test.", hint="Add `smoke_test:` to the recipe.")
    return argv


def _consent(store: Store, record: EnvRecord, *, trusted: bool) -> EnvRecord:
    """An archive's smoke test is code from someone else: shown, and run only with --trust-smoke-test,
    which records the consent (the TUI and exports then use it too)."""
    test = record.meta.archived_smoke_test()
    shown = repr(test.argv() if test is not None else None)  # repr: a control character in it never reaches the terminal raw
    if not trusted:
        unpacked = record.meta.unpacked_from
        source = (unpacked.archive if unpacked else "") or "an archive"
        raise UsageError(f"The smoke test of {record.name} came in {source[:200]!r} and runs only with your consent: "
                         f"{shown[:300]}{'...' if len(shown) > 300 else ''}",
                         hint=f"Run it if you trust it: `cuenv test {record.name} {TRUST_SMOKE_FLAG}`.")
    with store.locked(record.name):
        store.write_meta(record.name, record.meta.trusted())
    return store.get(record.name)


def run(ctx: Context) -> Result[Smoke]:
    import shutil

    from cuenv import runner
    from cuenv.commands.run import prepared_env
    from cuenv.envs.store import Store

    store = Store.from_settings(ctx.settings)
    record = store.get(ctx.args.name)
    if record.meta.archived_smoke_test() is not None:
        record = _consent(store, record, trusted=ctx.args.trust_smoke_test)
    argv = smoke_argv(record.meta.runnable_smoke_test())
    env = prepared_env(ctx, ctx.args.name)
    exe = shutil.which(argv[0], path=env.get("PATH", ""))
    if exe is None:
        raise CuenvError(f"{argv[0]!r} is not in environment {ctx.args.name!r}.")
    done = runner.run([exe, *argv[1:]], timeout=ctx.args.timeout, env=env, check=False)
    no_gpu_here = False
    if done.returncode != 0:
        from cuenv.machine.driver import detect

        no_gpu_here = detect(ctx.environ, cache_dir=ctx.settings.cache_dir).driver is None
    smoke = Smoke(ctx.args.name, done.returncode, done.stdout, done.stderr, no_gpu_here=no_gpu_here)
    return Result(smoke, render, exit_code=EXIT_OK if smoke.ok else EXIT_PROBLEMS)


class Smoke:
    """`cuenv test NAME`: ``{"name", "ok", "returncode", "stdout", "stderr"}``, plus ``no_gpu_here: true``
    when it failed on a machine without an NVIDIA driver (expected there, issue 30 §4)."""

    __slots__ = ("name", "no_gpu_here", "returncode", "stderr", "stdout")

    def __init__(self, name: str, returncode: int, stdout: str, stderr: str, *, no_gpu_here: bool) -> None:
        self.name, self.returncode, self.stdout, self.stderr = name, returncode, stdout, stderr
        self.no_gpu_here = no_gpu_here

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def to_json(self) -> JSONObject:
        data: JSONObject = {"name": self.name, "ok": self.ok, "returncode": self.returncode, "stdout": self.stdout,
                            "stderr": self.stderr}
        if self.no_gpu_here:
            data["no_gpu_here"] = True
        return data


def render(smoke: Smoke) -> str:
    verdict_line = f"smoke test of {smoke.name}: {'passed' if smoke.ok else f'failed (exit {smoke.returncode})'}"
    if smoke.no_gpu_here:
        verdict_line += ("\nnote: this machine has no NVIDIA driver, so a smoke test's GPU step cannot pass here; "
                         "what it printed before failing (imports, runtime and compiler versions) is what can be checked "
                         "without a GPU.")
    return "\n".join(x for x in (smoke.stdout.rstrip(), smoke.stderr.rstrip() if not smoke.ok else "", verdict_line) if x)
