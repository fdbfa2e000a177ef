"""Editing a text in the user's own editor (`$VISUAL`, `$EDITOR`, else `vi`).

The text goes to a new scratch file in the workspace; the app is suspended while
the editor runs on it (headless test apps, which cannot suspend, run it with its
output captured); the file's text is read back and the file removed.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from textual.app import SuspendNotSupported

from toolreplay_tui.model.workspace import Workspace

__all__ = ["ExternalEdit", "Suspendable", "edit_externally", "editor_command"]


class Suspendable(Protocol):
    """What runs an editor in the terminal: a Textual app, which gives it the terminal."""

    def suspend(self) -> AbstractContextManager[None]: ...

    @property
    def is_headless(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class ExternalEdit:
    """What the editor left: the text, or (`text` None) why there is none."""

    text: str | None
    problem: str | None = None


def editor_command() -> str:
    """The user's editor command line: `$VISUAL`, else `$EDITOR`, else `vi`."""
    return os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"


def edit_externally(
    app: Suspendable, workspace: Workspace, start: str, label: Callable[[Path], str]
) -> ExternalEdit:
    """Let the user edit `start` in their editor; `label` shows a path in a problem."""
    try:
        path = workspace.write_text("edit", ".json", start + "\n")
    except OSError as error:
        return ExternalEdit(None, f"cannot write the file to edit: {error}")
    command = editor_command()
    try:
        argv = [*shlex.split(command), str(path)]
        try:
            with app.suspend():
                completed = subprocess.run(argv, check=False)
        except SuspendNotSupported:
            if not app.is_headless:
                raise
            completed = subprocess.run(argv, check=False, capture_output=True)
    except (OSError, ValueError, SuspendNotSupported) as error:  # ValueError: shlex's quotes
        return ExternalEdit(None, f"cannot run the editor {command!r}: {error}")
    if completed.returncode != 0:
        return ExternalEdit(
            None, f"the editor exited with status {completed.returncode}; nothing changed"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return ExternalEdit(None, f"cannot read {label(path)}: {error}")
    with contextlib.suppress(OSError):
        path.unlink()  # our own scratch file: what it held is now in `text`
    return ExternalEdit(text)
