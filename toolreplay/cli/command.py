"""What one `toolreplay NAME` command is: its arguments (argparse) and the function that runs.

Each command module exports its commands in `COMMANDS`; `toolreplay.cli.app` names
them and imports a command's module only when that command runs.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from toolreplay.errors import ToolReplayError

__all__ = ["SKIPPED_EXIT_CODE", "Command", "UsageError", "choice_of", "whole_number"]

Choice = TypeVar("Choice", bound=StrEnum)

SKIPPED_EXIT_CODE = 3
"""`find` and `scan`: nothing was found, but some files were skipped (they could not be
read), so "nothing" is not certain."""


class UsageError(ToolReplayError):
    """An argument that parsed but is refused by the command: reported as argparse reports
    a usage error (the usage line, then `toolreplay NAME: error: MESSAGE`, exit status 2).
    The message starts with the argument it is about (`argument PATH: ...`)."""


@dataclass(frozen=True, slots=True)
class Command:
    """One command: its name, its help, its arguments and what runs it.

    `add_arguments` declares the arguments on the command's parser, each one's `dest`
    the name of a keyword parameter of `run`; `run` is called with the parsed values as
    keywords and returns the exit status.
    """

    name: str
    summary: str
    """One line of at most 79 characters, listed by `toolreplay --help`."""
    description: str
    """Paragraphs printed by `toolreplay NAME --help` as written (dedented as a docstring),
    exit statuses included."""
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[..., int]

    def parser(self) -> argparse.ArgumentParser:
        """The command's parser (`prog` is `toolreplay NAME`)."""
        parser = argparse.ArgumentParser(
            prog=f"toolreplay {self.name}",
            description=f"{self.summary}\n\n{inspect.cleandoc(self.description)}",
            # The description's paragraphs and lists as written; the options' help wrapped.
            formatter_class=argparse.RawDescriptionHelpFormatter,
            # An abbreviation accepted today would break when a longer option is added.
            allow_abbrev=False,
        )
        self.add_arguments(parser)
        return parser


def whole_number(minimum: int) -> Callable[[str], int]:
    """An argument's type: a whole number, at least `minimum`."""

    def convert(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if number < minimum:
            raise argparse.ArgumentTypeError(f"{number} is less than the minimum, {minimum}")
        return number

    return convert


def choice_of(choices: type[Choice]) -> Callable[[str], Choice]:
    """An argument's type: one of a `StrEnum`'s values, refused in argparse's own words."""

    def convert(text: str) -> Choice:
        try:
            return choices(text)
        except ValueError:
            allowed = ", ".join(repr(choice.value) for choice in choices)
            raise argparse.ArgumentTypeError(
                f"invalid choice: {text!r} (choose from {allowed})"
            ) from None

    return convert
