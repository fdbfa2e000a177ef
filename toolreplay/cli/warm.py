"""A warm runner: a child that has already imported the command line, and forks a fresh
process for each run.

It lives with the command line it hosts; the terminal UI starts it as
`python -m toolreplay.cli.warm` and speaks the protocol below.

Starting `python -m toolreplay fork ...` costs a second or more in imports before the
application's first line runs. The warm runner pays what it can in advance: started
when a trace is opened, it imports `toolreplay.cli` and every command's module, and
nothing of the application: no runner is imported or called until the user asks for a
run (a trace is untrusted input, and opening one must run none of the code it names).
Then, for each request, it forks. The forked process is what a cold child would be,
minus those imports: it starts its own session (process group), writes the command's
stdout and stderr to the files the client named, runs the command line with the
request's arguments and exits. So each run still has its own process: a crash, an
`os._exit` or a hang affects only it, a cancel or a timeout kills its whole process
group, and nothing one run changes in memory is seen by the next (each is forked from
the untouched warm parent).

Before any run, the client may ask it to prepare for the trace being debugged, naming
the trace's effects: for each effect namespace Tool Replay has an adapter for (`openai`),
it imports that adapter (Tool Replay's own module, and the SDK it wraps) and lets it
parse the trace's recorded answers with the SDK's types (live effects refused). The
trace chooses only whether an adapter from that fixed list is imported; it never names
the code.

The application's imports are learned from the runs themselves: a forked run writes the
names of the modules it imported to the file the request names (`modules`), and once it
has ended the parent imports those too (live effects refused meanwhile, as `load_runner`
does), and lets the adapters among them prepare what parsing the run's trace needs. So
the first run pays the application's imports (lazy ones included, such as an SDK
building its resources on first use) and every later run starts from a parent that has
them. The parent never calls the application: it only imports what a run the user asked
for has imported.

When a source file of an imported module under the working directory changes, the
warm parent answers `stale` instead of forking and exits; the client starts a new
one, which imports the changed code.

Protocol on the parent's stdin/stdout, one JSON object per line: the parent prints
`{"ready": true}`; the client may send `{"prepare": TRACE, "effects": [...]}`, answered
`{"prepared": true}`, and sends `{"argv": [...], "stdout": PATH, "stderr": PATH}`,
optionally with `"modules": PATH` (learn the run's imports) and `"trace": PATH` (the
trace the run reads, for the adapters); the parent answers `{"pid": N}` when forked (or
`{"stale": true}`), then `{"exit": CODE}` when that process ended.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import importlib.util
import json
import os
import sys
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
    command_line: Callable[[list[str]], object],
    argv: list[str],
    stdout: str,
    stderr: str,
    modules: str | None,
) -> None:
    """In the forked process: become a session leader, run the command line, report the
    modules it imported (to `modules`, if given), exit."""
    code = 1
    before = set(sys.modules)
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
        if modules is not None:
            with contextlib.suppress(OSError):
                Path(modules).write_text("\n".join(sorted(set(sys.modules) - before)))
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)  # never return into the warm parent's loop


def _reported(report: str | None) -> list[str]:
    """The modules a finished run reported importing (none if it could not say)."""
    if report is None:
        return []
    try:
        return Path(report).read_text().split()
    except OSError:
        return []


def _learn_imports(names: list[str], trace: str | None) -> dict[str, int]:
    """Import what a finished run imported (live effects refused), and let the adapters
    among them prepare for `trace`. Never raises: learning only saves later runs time.

    Returns the modification time of each module's source file as it was just before
    the module was imported: a source saved during its import is then seen as changed.
    """
    from toolreplay.runtime.session import offline_guard

    before: dict[str, int] = {}
    with offline_guard.holding():
        for name in names:
            with contextlib.suppress(Exception):
                origin = getattr(importlib.util.find_spec(name), "origin", None)
                if isinstance(origin, str) and os.path.isfile(origin):
                    before[str(Path(origin).resolve())] = os.stat(origin).st_mtime_ns
                importlib.import_module(name)
        if trace is not None:
            _prepare_adapters(trace)
    return before


ADAPTERS = {"openai": "toolreplay.adapters.openai"}
"""Tool Replay's own adapter module for each effect namespace it records."""


def _prepare_for(trace: str, effects: list[str]) -> None:
    """Import Tool Replay's adapters for the namespaces among `effects` and let them
    prepare for `trace`: a fixed list of this package's modules (and the SDKs they
    wrap), chosen by the namespaces alone; nothing the trace names is imported or called."""
    wanted = [
        module
        for namespace, module in ADAPTERS.items()
        if any(effect.startswith(f"{namespace}.") for effect in effects)
    ]
    if not wanted:
        return
    from toolreplay.runtime.session import offline_guard

    with offline_guard.holding():
        for module in wanted:
            with contextlib.suppress(Exception):
                importlib.import_module(module)
        _prepare_adapters(trace)


def _prepare_adapters(trace: str) -> None:
    """Let the adapters the application imported build what parsing its answers needs."""
    adapter = sys.modules.get("toolreplay.adapters.openai")
    if adapter is None:
        return
    from toolreplay.trace.reader import read_trace

    with contextlib.suppress(Exception):  # an optimisation: a failure costs only time
        adapter.prepare_replay(read_trace(trace))


def _settle(stamped: dict[str, int] | None = None) -> dict[str, int]:
    """Stamp the project's sources (as `stamped`, taken before their imports, says where
    it knows), and keep the collector off what is imported now."""
    stamps = _project_sources(Path.cwd().resolve())
    if stamped:
        stamps = {path: stamped.get(path, stamp) for path, stamp in stamps.items()}
    # What is imported now is never freed: keep the collector off it, so a forked run's
    # collections do not touch (and copy) every page it shares with this process.
    gc.collect()
    gc.freeze()
    return stamps


def main(argv: list[str] | None = None) -> int:
    """`python -m toolreplay.cli.warm`: serve runs until stdin closes."""
    arguments = sys.argv[1:] if argv is None else argv
    if arguments:
        sys.stderr.write(
            "usage: python -m toolreplay.cli.warm (no arguments: runs name their runner)\n"
        )
        return 2
    from toolreplay.runners import import_from_working_directory

    import_from_working_directory()
    from toolreplay.cli import main as command_line
    from toolreplay.cli.app import load_commands

    # The imports every run needs, and every command built from its function, paid once.
    load_commands()
    stamps = _settle()
    protocol = sys.stdout
    protocol.write(json.dumps({"ready": True}) + "\n")
    protocol.flush()
    for line in sys.stdin:
        request = json.loads(line)
        if "prepare" in request:
            _prepare_for(request["prepare"], list(request.get("effects", [])))
            stamps = _settle()
            protocol.write(json.dumps({"prepared": True}) + "\n")
            protocol.flush()
            continue
        if _changed(stamps):
            protocol.write(json.dumps({"stale": True}) + "\n")
            protocol.flush()
            return 0
        modules: str | None = request.get("modules")
        protocol.flush()
        pid = os.fork()
        if pid == 0:
            _run_forked(
                command_line,
                list(request["argv"]),
                request["stdout"],
                request["stderr"],
                modules,
            )
        protocol.write(json.dumps({"pid": pid}) + "\n")
        protocol.flush()
        _, status = os.waitpid(pid, 0)
        learned = _reported(modules)  # read before answering: the client then removes it
        protocol.write(json.dumps({"exit": os.waitstatus_to_exitcode(status)}) + "\n")
        protocol.flush()
        if learned:
            stamps = _settle(_learn_imports(learned, request.get("trace")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
