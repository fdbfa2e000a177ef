"""A warm runner: a child that has already imported the command line and the application,
and forks a fresh process for each run.

It lives with the command line it hosts; the terminal UI starts it as
`python -m toolreplay.cli.warm RUNNER TRACE` and speaks the protocol below.

Starting `python -m toolreplay fork ...` costs a second or more in imports before the
application's first line runs. The warm runner pays that once: it is started with
the application's runner spec, imports `toolreplay.cli` and the runner's module (live
effects refused meanwhile, as `load_runner` does), and then, for each request, forks.
The forked process is what a cold child would be, minus the imports: it starts its
own session (process group), writes the command's stdout and stderr to the files the
client named, runs the command line with the request's arguments and exits. So each
run still has its own process: a crash, an `os._exit` or a hang affects only it, a
cancel or a timeout kills its whole process group, and nothing one run changes in
memory is seen by the next (each is forked from the untouched warm parent).

Many libraries import most of themselves lazily, on first use (an SDK client builds its
resources when the application first calls it). So before serving, the warm parent
forks one probe: a strict `toolreplay replay TRACE` of the trace being debugged (no
effect body runs, no file is written), which reports the modules it imported; the
parent then imports those modules itself (live effects refused meanwhile), without
running any application code.

When a source file of an imported module under the working directory changes, the
warm parent answers `stale` instead of forking and exits; the client starts a new
one, which imports the changed code.

Protocol on the parent's stdin/stdout, one JSON object per line: the parent prints
`{"ready": true}`; the client sends `{"argv": [...], "stdout": PATH, "stderr": PATH}`;
the parent answers `{"pid": N}` when forked (or `{"stale": true}`), then
`{"exit": CODE}` when that process ended.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

__all__ = ["main"]


def _project_sources(root: Path) -> dict[str, int]:
    """Modification times of the imported modules' files under `root` (the project)."""
    stamps: dict[str, int] = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str):
            continue
        try:
            resolved = Path(path).resolve()
            if resolved.is_relative_to(root) and ".venv" not in resolved.parts:
                stamps[str(resolved)] = resolved.stat().st_mtime_ns
        except OSError:
            stamps[path] = -1
    return stamps


def _changed(stamps: dict[str, int]) -> bool:
    for path, stamp in stamps.items():
        try:
            if Path(path).stat().st_mtime_ns != stamp:
                return True
        except OSError:
            return True
    return False


def _run_forked(
    command_line: Callable[[list[str]], object], argv: list[str], stdout: str, stderr: str
) -> None:
    """In the forked process: become a session leader, run the command line, exit."""
    code = 1
    try:
        os.setsid()  # its own process group: a cancel kills everything it started
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for target, fd in ((stdout, 1), (stderr, 2)):
            opened = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        try:
            command_line(argv)
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        except BaseException:
            traceback.print_exc()  # what a cold child's interpreter would print
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)  # never return into the warm parent's loop


def _probe_imports(runner: str, trace: str) -> list[str]:
    """The modules a strict replay of `trace` imports, found in a forked probe."""
    with tempfile.TemporaryDirectory(prefix="toolreplay-warm-") as folder:
        report = Path(folder, "modules")
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                before = set(sys.modules)
                with contextlib.suppress(BaseException):
                    _run_quietly(["replay", trace, "--runner", runner, "--format", "json"])
                report.write_text("\n".join(sorted(set(sys.modules) - before)))
                code = 0
            finally:
                os._exit(code)
        os.waitpid(pid, 0)
        return report.read_text().split() if report.exists() else []


def _prepare_adapters(trace: str) -> None:
    """Let the adapters the application imported build what parsing its answers needs."""
    adapter = sys.modules.get("toolreplay.adapters.openai")
    if adapter is None:
        return
    from toolreplay.trace.reader import read_trace

    with contextlib.suppress(Exception):  # an optimisation: a failure costs only time
        adapter.prepare_replay(read_trace(trace))


def _run_quietly(arguments: list[str]) -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    from toolreplay.cli import main

    main(arguments)


def main(argv: list[str] | None = None) -> int:
    """`python -m toolreplay.cli.warm [RUNNER [TRACE]]`: serve runs until stdin closes."""
    arguments = sys.argv[1:] if argv is None else argv
    from toolreplay.runners import import_from_working_directory, load_runner

    import_from_working_directory()
    from toolreplay.cli import main as command_line
    from toolreplay.cli.app import load_commands

    # The imports every run needs, and every command built from its function, paid once.
    load_commands()

    if arguments:
        # Import the application; a failure is the forked run's to report, precisely.
        with contextlib.suppress(Exception):
            load_runner(arguments[0])
    if len(arguments) > 1:
        from toolreplay.runtime.session import offline_guard

        with offline_guard.holding():
            for name in _probe_imports(arguments[0], arguments[1]):
                with contextlib.suppress(Exception):
                    importlib.import_module(name)
            _prepare_adapters(arguments[1])
    stamps = _project_sources(Path.cwd().resolve())
    # What is imported now is never freed: keep the collector off it, so a forked run's
    # collections do not touch (and copy) every page it shares with this process.
    gc.collect()
    gc.freeze()
    protocol = sys.stdout
    protocol.write(json.dumps({"ready": True}) + "\n")
    protocol.flush()
    for line in sys.stdin:
        request = json.loads(line)
        if _changed(stamps):
            protocol.write(json.dumps({"stale": True}) + "\n")
            protocol.flush()
            return 0
        protocol.flush()
        pid = os.fork()
        if pid == 0:
            _run_forked(command_line, list(request["argv"]), request["stdout"], request["stderr"])
        protocol.write(json.dumps({"pid": pid}) + "\n")
        protocol.flush()
        _, status = os.waitpid(pid, 0)
        protocol.write(json.dumps({"exit": os.waitstatus_to_exitcode(status)}) + "\n")
        protocol.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
