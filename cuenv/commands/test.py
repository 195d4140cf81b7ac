"""`cuenv test NAME`: run the recipe's smoke test inside the environment (import the framework, ask for the GPU)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Mapping

from cuenv.envs.meta import TRUST_SMOKE_FLAG, archived_smoke_test, smoke_test, trusted_smoke_test
from cuenv.errors import EXIT_OK, EXIT_PROBLEMS, CuenvError, UsageError
from cuenv.result import Result, text_result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.result import Text

TIMEOUT_S = 600.0


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("name", metavar="NAME", help="environment")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, metavar="S", help="give up after S seconds")
    parser.add_argument("--trust-smoke-test", action="store_true",
                        help="run a smoke test that came in an archive (`cuenv unpack`), and keep trusting it")


def smoke_argv(smoke: Mapping[str, Any] | None) -> list[str]:
    """The smoke test as argv: a python snippet runs with the environment's python."""
    if not smoke:
        raise CuenvError("This environment's recipe has no smoke test.", hint="Add `smoke_test:` to the recipe.")
    if smoke.get("python") is not None:
        return ["python", "-c", smoke["python"]]
    return list(smoke.get("command") or ())


def _consent(store: Any, record: Any, *, trusted: bool) -> Any:
    """An archive's smoke test is code from someone else: shown, and run only with --trust-smoke-test,
    which records the consent (the TUI and exports then use it too)."""
    test = archived_smoke_test(record.meta) or {}
    shown = repr(smoke_argv(test))  # repr: a control character in it never reaches the terminal raw
    if not trusted:
        source = (record.meta.get("unpacked_from") or {}).get("archive") or "an archive"
        raise UsageError(f"The smoke test of {record.name} came in {str(source)[:200]!r} and runs only with your consent: "
                         f"{shown[:300]}{'...' if len(shown) > 300 else ''}",
                         hint=f"Run it if you trust it: `cuenv test {record.name} {TRUST_SMOKE_FLAG}`.")
    with store.locked(record.name):
        store.write_meta(record.name, trusted_smoke_test(record.meta))
    return store.get(record.name)


def run(ctx: Context) -> Result[Text]:
    import shutil

    from cuenv import runner
    from cuenv.commands.run import prepared_env
    from cuenv.envs.store import Store

    store = Store.from_settings(ctx.settings)
    record = store.get(ctx.args.name)
    if archived_smoke_test(record.meta) is not None:
        record = _consent(store, record, trusted=ctx.args.trust_smoke_test)
    argv = smoke_argv(smoke_test(record.meta))
    env = prepared_env(ctx, ctx.args.name)
    exe = shutil.which(argv[0], path=env.get("PATH", ""))
    if exe is None:
        raise CuenvError(f"{argv[0]!r} is not in environment {ctx.args.name!r}.")
    done = runner.run([exe, *argv[1:]], timeout=ctx.args.timeout, env=env, check=False)
    ok = done.returncode == 0
    data = {"name": ctx.args.name, "ok": ok, "returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
    verdict_line = f"smoke test of {ctx.args.name}: {'passed' if ok else f'failed (exit {done.returncode})'}"
    if not ok:
        from cuenv.machine.driver import detect

        if detect(ctx.environ, cache_dir=ctx.settings.cache_dir).driver is None:  # expected on a GPU-less machine (issue 30 §4)
            verdict_line += ("\nnote: this machine has no NVIDIA driver, so a smoke test's GPU step cannot pass here; "
                             "what it printed before failing (imports, runtime and compiler versions) is what can be checked "
                             "without a GPU.")
            data["no_gpu_here"] = True
    text = "\n".join(x for x in (done.stdout.rstrip(), done.stderr.rstrip() if not ok else "", verdict_line) if x)
    return text_result(data=data, text=text, exit_code=EXIT_OK if ok else EXIT_PROBLEMS)
