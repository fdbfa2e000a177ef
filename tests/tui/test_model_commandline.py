"""Parsing the `:` command line: each command, and a precise refusal for anything else."""

from __future__ import annotations

import pytest
from toolreplay_tui.model.commandline import (
    CommandLineError,
    FilterEffect,
    JumpTo,
    Quit,
    SavePatches,
    SetTheme,
    ShowHelp,
    ShowMessages,
    parse_command,
)

import toolreplay


@pytest.mark.parametrize(
    ("typed", "command"),
    [
        (":123", JumpTo(123)),
        ("0", JumpTo(0)),
        (":effect llm.refund.decide", FilterEffect("llm.refund.decide")),
        (":w", SavePatches(None)),
        (":w  fix.json ", SavePatches("fix.json")),
        (":q", Quit(force=False)),
        (":q!", Quit(force=True)),
        (":theme nord", SetTheme("nord")),
        (":messages", ShowMessages()),
        (":help", ShowHelp()),
    ],
)
def test_each_command(typed: str, command: object) -> None:
    assert parse_command(typed) == command


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        (":", "type a command after ':' (:N, :effect NAME, :w [FILE], :q, :q!, :theme NAME"),
        (":frob", "unknown command :frob; the commands are :N, :effect NAME"),
        (":them dark", "unknown command :them; did you mean :theme? the commands are"),
        (":effect", ":effect takes NAME, got nothing: e.g. :effect NAME"),
        (":effect a b", ":effect takes NAME, got 2 words"),
        (":w a b", ":w takes at most one file name, got 2 words"),
        (":q now", ":q takes no argument, got 'now': type just :q"),
        (":12 x", ":12 takes no argument"),
        (":-3", ":-3: operations are numbered from 0; type :N, e.g. :0"),
    ],
)
def test_anything_else_is_refused_saying_why(typed: str, message: str) -> None:
    with pytest.raises(CommandLineError) as raised:
        parse_command(typed)
    assert message in str(raised.value)
    assert isinstance(raised.value, toolreplay.ToolReplayError)
