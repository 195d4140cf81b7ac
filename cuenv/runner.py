"""The only subprocess wrapper (STYLE.md §5): timeouts, a clean environment, typed failures."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from cuenv.errors import ToolError
from cuenv.plain import Plain

TYPE_CHECKING = False  # no `typing` or dataclasses at run time: `info` asks a system nvcc (issue 29)
if TYPE_CHECKING:
    from typing import IO, Any, Callable, Final, Mapping, Sequence, TypeVar

    Listener = Callable[[str], None]
    T = TypeVar("T")


def log(name: str, level: str, msg: str, *args: object) -> None:
    """An INFO or DEBUG record of logger ``name`` (-v, -vv), through ``logging`` where it is loaded (cuenv.cli.main
    loads it for -v; the TUI and tests have it). Where it is not, nothing has set a level or a handler, so the
    record would be dropped anyway: importing logging to drop it was a tenth of `cuenv add`'s start (issue 26)."""
    logging = sys.modules.get("logging")
    if logging is None or getattr(getattr(logging, "__spec__", None), "_initializing", False):
        return  # not loaded, or another thread is importing it right now (create finds toolkits in a thread)
    getattr(logging.getLogger(name), level)(msg, *args)


# Variables that make a child Python or loader pick up the caller's state (pipx does the same).
_DROP = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PIP_REQUIRE_VIRTUALENV", "__PYVENV_LAUNCHER__")

# The environment locks this thread holds (cuenv.envs.store.Store.locked): every child it starts gets them
# too. A conda or uv that outlives a kill -9 of cuenv (it runs in its own session) then keeps its environment
# locked until it ends, so the next command cannot swap the environment back while it still writes there.
_THREAD = threading.local()


def held_locks() -> set[int]:
    """The file descriptors of the locks the calling thread holds (the TUI changes environments in threads)."""
    held: set[int] | None = getattr(_THREAD, "locks", None)
    if held is None:
        held = _THREAD.locks = set()
    return held


class Completed(Plain):
    """A finished run: its argv, exit status and captured output."""

    __slots__ = ("argv", "returncode", "stdout", "stderr")

    def __init__(self, argv: tuple[str, ...], returncode: int, stdout: str, stderr: str) -> None:
        self.argv, self.returncode, self.stdout, self.stderr = argv, returncode, stdout, stderr


class ToolNotFound(ToolError):
    def __init__(self, tool: str, hint: str | None = None) -> None:
        super().__init__(f"{tool!r} was not found on PATH.", hint=hint)
        self.tool = tool


class ToolTimedOut(ToolError):
    def __init__(self, argv: Sequence[str], timeout: float) -> None:
        super().__init__(f"{Path(argv[0]).name} did not finish within {timeout:g} s.")
        self.argv = tuple(argv)


class ToolFailed(ToolError):
    def __init__(self, argv: Sequence[str], returncode: int, stdout: str, stderr: str) -> None:
        tail = stderr_tail(stderr or stdout)
        super().__init__(f"{Path(argv[0]).name} failed (exit {returncode}): {tail}")
        self.argv = tuple(argv)
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr


def stderr_tail(text: str, lines: int = 3) -> str:
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " | ".join(kept[-lines:]) if kept else "no output"


def clean_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    base = dict(os.environ if env is None else env)
    for name in _DROP:
        base.pop(name, None)
    return base


def run(
    argv: Sequence[str | Path],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    check: bool = True,
    input: str | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> Completed:
    """Run ``argv`` and capture its output; raise ToolNotFound, ToolTimedOut or ToolFailed.

    ``meanwhile``: called once the child has started, before its output is awaited: work that does not
    need the child's answer runs while the child waits on the network (issue 26: `cuenv add` prepares the
    reader of uv's answer while uv asks the index). The timeout counts from the start; if ``meanwhile``
    raises, the child is killed and the exception goes on."""
    child = start(argv, timeout=timeout, env=env, cwd=cwd, stdin=input is not None)
    if meanwhile is not None:
        try:
            meanwhile()
        except BaseException:
            child.kill()
            raise
    return child.wait(check=check, input=input)


def start(argv: Sequence[str | Path], *, timeout: float, env: Mapping[str, str] | None = None, cwd: Path | None = None,
          stdin: bool = False) -> Started:
    """``argv`` started with its output captured; :meth:`Started.wait` collects it as :func:`run` does.
    For a child whose answer is needed only later (`cuenv add` asks the index while uv's cache answers)."""
    args = [str(a) for a in argv]
    log(__name__, "info", "$ %s", " ".join(args))  # shown with -v
    started = time.monotonic()
    try:
        proc = subprocess.Popen(args, env=clean_env(env), cwd=cwd, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL, pass_fds=tuple(held_locks()))
    except FileNotFoundError:
        raise ToolNotFound(args[0]) from None
    return Started(proc, tuple(args), started, timeout)


class Started:
    """A child of :func:`start`, still running until :meth:`wait`ed for (or :meth:`kill`ed)."""

    __slots__ = ("proc", "args", "started", "timeout")

    def __init__(self, proc: subprocess.Popen[str], args: tuple[str, ...], started: float, timeout: float) -> None:
        self.proc, self.args, self.started, self.timeout = proc, args, started, timeout

    def wait(self, *, check: bool = True, input: str | None = None) -> Completed:
        """Its output and exit status; ToolTimedOut past its timeout (counted from its start), ToolFailed
        where ``check`` and it failed. Any exception (Ctrl-C too) while waiting kills it."""
        proc = self.proc
        with proc:
            try:
                stdout, stderr = proc.communicate(input, timeout=max(0.0, self.timeout - (time.monotonic() - self.started)))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                raise ToolTimedOut(self.args, self.timeout) from None
            except BaseException:
                proc.kill()
                raise
        log(__name__, "debug", "exit %d after %.2f s%s", proc.returncode, time.monotonic() - self.started,  # -vv
            f"; stderr: {stderr_tail(stderr)}" if stderr.strip() else "")
        done = Completed(self.args, proc.returncode, stdout, stderr)
        if check and proc.returncode != 0:
            raise ToolFailed(self.args, proc.returncode, stdout, stderr)
        return done

    def kill(self) -> None:
        with self.proc:
            self.proc.kill()


# How long a process group gets to end after SIGTERM before SIGKILL: cancel means stop within a
# second (issue 18), and uv/conda leave their caches consistent on SIGTERM.
_TERM_GRACE: Final = 0.5


def stream(
    argv: Sequence[str | Path],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    on_line: Listener | None = None,
    tick: Callable[[], None] | None = None,
    interval: float = 0.2,
) -> Completed:
    """Run ``argv`` like :func:`run` (check=False), handing each output line to ``on_line`` as it comes
    and calling ``tick`` at least every ``interval`` seconds.

    The child runs in its own process group. If ``on_line`` or ``tick`` raises (a cancel), or
    KeyboardInterrupt arrives, or the timeout passes, the whole group (uv and its workers, conda
    and its downloads) is ended, SIGTERM then SIGKILL after half a second, and the exception goes on.
    Lines are stderr and stdout together, in arrival order; both are also returned whole.
    """
    args = [str(a) for a in argv]
    log(__name__, "info", "$ %s", " ".join(args))
    try:
        proc = subprocess.Popen(args, env=clean_env(env), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True,
                                pass_fds=tuple(held_locks()))
    except FileNotFoundError:
        raise ToolNotFound(args[0]) from None
    lines: queue.Queue[tuple[int, str | None]] = queue.Queue()
    kept: tuple[list[str], list[str]] = ([], [])

    def pump(which: int, pipe: IO[str]) -> None:
        for text in iter(pipe.readline, ""):
            lines.put((which, text))
        lines.put((which, None))

    readers = [threading.Thread(target=pump, args=(i, p), daemon=True) for i, p in enumerate((proc.stdout, proc.stderr))]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + timeout
    open_pipes = 2
    try:
        while open_pipes:
            try:
                which, text = lines.get(timeout=interval)
            except queue.Empty:
                which, text = -1, None
            if text is not None:
                kept[which].append(text)
                if on_line is not None:
                    on_line(text.rstrip("\r\n"))
            elif which >= 0:
                open_pipes -= 1
            if tick is not None:
                tick()
            if time.monotonic() > deadline:
                raise ToolTimedOut(args, timeout)
        proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        log(__name__, "debug", "exit %d after %.2f s", proc.returncode, time.monotonic() - (deadline - timeout))  # -vv
    except subprocess.TimeoutExpired:
        end_group(proc)
        raise ToolTimedOut(args, timeout) from None
    except BaseException:
        end_group(proc)
        raise
    return Completed(tuple(args), proc.returncode, "".join(kept[0]), "".join(kept[1]))


def end_group(proc: subprocess.Popen[str]) -> None:
    """End ``proc`` and every process it started (its own session): SIGTERM, then SIGKILL."""
    for sig, wait in ((signal.SIGTERM, _TERM_GRACE), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


def meanwhile(work: Callable[..., T], *args: object) -> Callable[[], T]:
    """``work(*args)`` started in a thread now; the function returned waits for its result (raising what it
    raised). For work that needs nothing of what the caller does meanwhile: the caller's wait for a tool (uv)
    releases the interpreter to it. A daemon thread: a failed or interrupted command does not wait for it."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work(*args)
        except BaseException as exc:  # handed to the caller by result()
            box["error"] = exc

    thread = threading.Thread(target=run, name=f"cuenv-{getattr(work, '__name__', 'work')}", daemon=True)
    thread.start()

    def result() -> T:
        thread.join()
        if "error" in box:
            raise box["error"]
        value: T = box["value"]
        return value

    return result
