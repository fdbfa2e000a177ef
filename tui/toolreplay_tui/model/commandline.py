"""The `:` command line: what each command means, parsed from what was typed.

`:123` jumps to operation 123, `:effect NAME` keeps the operations of one
effect, `:w [FILE]` saves the pending patches, `:q` quits (asking when patches
are unsaved), `:q!` quits without asking, `:theme NAME` changes the colours,
`:messages` shows every message of the session, `:help` every key. Anything
else is refused with a `CommandLineError` that says what was wrong and what
the commands are.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from toolreplay.errors import ToolReplayError

__all__ = [
    "COMMANDS",
    "Command",
    "CommandLineError",
    "FilterEffect",
    "JumpTo",
    "Quit",
    "SavePatches",
    "SetTheme",
    "ShowHelp",
    "ShowMessages",
    "parse_command",
]


class CommandLineError(ToolReplayError, ValueError):
    """What was typed after `:` is not a command, or lacks (or has too many) arguments."""


@dataclass(frozen=True, slots=True)
class JumpTo:
    """`:123`: move to the operation whose logical id is `logical_id`."""

    logical_id: int


@dataclass(frozen=True, slots=True)
class FilterEffect:
    """`:effect NAME`: keep the operations of effect `name` in the list."""

    name: str


@dataclass(frozen=True, slots=True)
class SavePatches:
    """`:w [FILE]`: save the pending patches to `path` (None: the suggested new file)."""

    path: str | None


@dataclass(frozen=True, slots=True)
class Quit:
    """`:q` (asks when patches are unsaved), `:q!` (`force`: never asks)."""

    force: bool


@dataclass(frozen=True, slots=True)
class SetTheme:
    """`:theme NAME`: switch to the Textual theme `name`."""

    name: str


@dataclass(frozen=True, slots=True)
class ShowMessages:
    """`:messages`: the message log."""


@dataclass(frozen=True, slots=True)
class ShowHelp:
    """`:help`: every key."""


Command = JumpTo | FilterEffect | SavePatches | Quit | SetTheme | ShowMessages | ShowHelp

COMMANDS: tuple[tuple[str, str], ...] = (
    (":N", "jump to operation N (its # in the list)"),
    (":effect NAME", "keep only the operations of effect NAME"),
    (":w [FILE]", "save the pending patches (to FILE, or a new file in the work folder)"),
    (":q", "quit (asking first when patches are unsaved)"),
    (":q!", "quit without saving"),
    (":theme NAME", "change the colours (ctrl+p, Theme, lists the themes)"),
    (":messages", "every message of this session"),
    (":help", "every key"),
)
"""Each command's syntax and what it does, for help, the palette and errors."""

_NAMES = ("effect", "w", "q", "q!", "theme", "messages", "help")


def _listing() -> str:
    return ", ".join(syntax for syntax, _ in COMMANDS)


def _one_argument(name: str, arguments: list[str], what: str) -> str:
    if len(arguments) != 1:
        given = "nothing" if not arguments else f"{len(arguments)} words"
        raise CommandLineError(f":{name} takes {what}, got {given}: e.g. :{name} {what}")
    return arguments[0]


def _no_argument(name: str, arguments: list[str]) -> None:
    if arguments:
        raise CommandLineError(
            f":{name} takes no argument, got {' '.join(arguments)!r}: type just :{name}"
        )


def parse_command(typed: str) -> Command:
    """The command `typed` (with or without its leading `:`).

    Raises `CommandLineError` naming what is wrong and listing the commands.
    """
    text = typed.strip().removeprefix(":").strip()
    if not text:
        raise CommandLineError(f"type a command after ':' ({_listing()})")
    name, *arguments = text.split()
    if name.isdigit():
        _no_argument(name, arguments)
        return JumpTo(int(name))
    if name.startswith(("-", "+")) and name[1:].isdigit():
        raise CommandLineError(f":{name}: operations are numbered from 0; type :N, e.g. :0")
    if name == "effect":
        return FilterEffect(_one_argument(name, arguments, "NAME"))
    if name == "w":
        if len(arguments) > 1:
            raise CommandLineError(
                f":w takes at most one file name, got {len(arguments)} words: e.g. :w fix.json"
            )
        return SavePatches(arguments[0] if arguments else None)
    if name in ("q", "q!"):
        _no_argument(name, arguments)
        return Quit(force=name == "q!")
    if name == "theme":
        return SetTheme(_one_argument(name, arguments, "NAME"))
    if name == "messages":
        _no_argument(name, arguments)
        return ShowMessages()
    if name == "help":
        _no_argument(name, arguments)
        return ShowHelp()
    close = difflib.get_close_matches(name, _NAMES, n=1)
    hint = f"did you mean :{close[0]}? " if close else ""
    raise CommandLineError(f"unknown command :{name}; {hint}the commands are {_listing()}")
