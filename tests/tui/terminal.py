"""A real terminal for the debugger: a private tmux server, driven by keys, read by screen.

`TmuxTerminal` starts one command in a detached tmux session of a fixed size, on
its own server socket (never the user's tmux), sends keys as a person types them
and reads what the pane shows. Closing it kills that server and nothing else.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Self

__all__ = ["TMUX", "LoggedTerminal", "TmuxTerminal"]

TMUX = shutil.which("tmux")
"""The tmux executable, or None where it is not installed."""


class TmuxTerminal:
    """One command running in a `width`x`height` tmux pane."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        width: int = 80,
        height: int = 24,
    ) -> None:
        assert TMUX is not None, "tmux is not installed"
        self.tmux = TMUX
        self.socket = f"toolreplay-test-{os.getpid()}-{time.monotonic_ns()}"
        # The pane's size is the terminal's: a COLUMNS or LINES inherited from the test
        # run (GNU readline exports them when pytest imports it, and xdist's workers start
        # with them) would make the command lay itself out at that size instead.
        self.env = {name: value for name, value in env.items() if name not in ("COLUMNS", "LINES")}
        self._run(
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            str(width),
            "-y",
            str(height),
            "-c",
            str(cwd),
            *command,
        )
        # Keep the pane (and its last screen) when the command ends, to say why it did.
        self._run("set-option", "-t", "main", "remain-on-exit", "on")

    def _run(self, *args: str) -> str:
        result = subprocess.run(
            [self.tmux, "-L", self.socket, "-f", os.devnull, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if result.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {result.stderr.strip()}")
        return result.stdout

    def keys(self, *names: str) -> None:
        """Press keys by tmux name (`j`, `Tab`, `Enter`, `Escape`, `C-s`)."""
        for name in names:
            self._run("send-keys", "-t", "main", name)

    def type(self, text: str) -> None:
        """Type `text` literally."""
        self._run("send-keys", "-t", "main", "-l", text)

    def pane_pid(self) -> str:
        """The process id of the command running in the pane."""
        return self._run("display-message", "-p", "-t", "main", "#{pane_pid}").strip()

    def screen(self) -> str:
        """What the pane shows now, one line per row."""
        return self._run("capture-pane", "-p", "-t", "main")

    def scrollback(self, lines: int = 200) -> str:
        """The pane's last `lines` of history and what it shows now (a command's last
        words scroll out of the screen when the debugger leaves its alternate screen)."""
        return self._run("capture-pane", "-p", "-t", "main", "-S", f"-{lines}")

    def wait_for(self, *texts: str, timeout: float = 60.0) -> str:
        """Wait until the pane shows every one of `texts`; returns that screen."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if all(text in screen for text in texts):
                return screen
            time.sleep(0.1)  # poll the pane: tmux has no way to wait for a change
        raise AssertionError(f"the terminal never showed {texts!r}; it shows:\n{screen}")

    def wait_until_gone(self, text: str, timeout: float = 30.0) -> str:
        """Wait until the pane no longer shows `text`; returns that screen."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text not in screen:
                return screen
            time.sleep(0.1)  # poll the pane: tmux has no way to wait for a change
        raise AssertionError(f"the terminal kept showing {text!r}:\n{screen}")

    def wait_until_dead(self, timeout: float = 30.0) -> None:
        """Wait until the command has exited (the pane stays, `remain-on-exit`)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._run("display-message", "-p", "-t", "main", "#{pane_dead}").strip() == "1":
                return
            time.sleep(0.1)  # poll the pane: tmux has no way to wait for an exit
        raise AssertionError(f"the command did not exit; the terminal shows:\n{self.screen()}")

    def close(self) -> None:
        """Kill this terminal's own tmux server (and the command in it), and remove its
        socket file."""
        socket = Path(self._run("display-message", "-p", "#{socket_path}").strip())
        subprocess.run(
            [self.tmux, "-L", self.socket, "kill-server"],
            env=self.env,
            capture_output=True,
            timeout=30,
            check=False,
        )
        socket.unlink(missing_ok=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class LoggedTerminal(TmuxTerminal):
    """A `TmuxTerminal` that logs every byte its command writes to the terminal (tmux
    `pipe-pane`, attached before the command starts) and, as a terminal set up for
    it would, lets the command set the pane's title and write the clipboard (OSC 52
    with `set-clipboard on` makes a tmux buffer): what reached the terminal, and what
    it did with it, can be checked."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        log: Path,
        width: int = 80,
        height: int = 24,
    ) -> None:
        # The command waits for a line before it starts, so the log misses none of it.
        waiting = ["sh", "-c", 'read _ && exec "$@"', "sh", *command]
        super().__init__(waiting, cwd=cwd, env=env, width=width, height=height)
        self.log = log
        self._run("set-option", "-s", "set-clipboard", "on")
        self._run("pipe-pane", "-o", "-t", "main", f"cat >> {shlex.quote(str(log))}")
        self.keys("Enter")

    def raw(self, settle: float = 0.3, timeout: float = 30.0) -> bytes:
        """Every byte written to the terminal so far. The log is written by a `cat` that
        tmux feeds, which on a loaded machine runs behind the screen: this waits until
        the log has something and has not grown for `settle` seconds."""
        deadline = time.monotonic() + timeout
        size = 0
        while time.monotonic() < deadline:
            time.sleep(settle)  # poll the file: the cat behind it says nothing when done
            now = self.log.stat().st_size if self.log.exists() else 0
            if now and now == size:
                break
            size = now
        return self.log.read_bytes() if self.log.exists() else b""

    def title(self) -> str:
        """The pane's title, as an OSC 0 or 2 sets it."""
        return self._run("display-message", "-p", "-t", "main", "#{pane_title}").strip()

    def clipboard(self) -> str:
        """tmux's paste buffers: what OSC 52 writes reached, one line each."""
        return self._run("list-buffers")
