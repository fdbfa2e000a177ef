"""The command palette's actions (`ctrl+p`): every key binding in effect where it opened.

Each command is a binding of the focused pane, its screen or the app, named by
its description and shown with its keys, so the palette teaches the keys; it
runs the binding's action exactly as the key would. Actions the current state
disables (promote before a fork succeeded) are left out.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any

from textual.binding import ActiveBinding, Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.dom import DOMNode

from toolreplay_tui.screens.help import key_text

__all__ = ["BindingCommand", "BindingCommands", "binding_commands"]

# The palette opening itself is not a command.
_LEFT_OUT = frozenset({"command_palette", "app.command_palette"})


@dataclass(frozen=True, slots=True)
class BindingCommand:
    """One action, the node it runs on, and every key bound to it there."""

    description: str
    keys: str
    action: str
    node: DOMNode
    tooltip: str = ""

    @property
    def help(self) -> str:
        """`key w · Save the pending patches to a new patch file`."""
        return f"key {self.keys}" + (f" · {self.tooltip}" if self.tooltip else "")

    @property
    def title(self) -> str:
        return f"{self.description}  ({self.keys})"


def binding_commands(bindings: Mapping[str, ActiveBinding], app: DOMNode) -> list[BindingCommand]:
    """The enabled, described bindings of `Screen.active_bindings`, one command per
    action and node (`j` and `down` are one "Down  (j ↓)"; `app.` actions run on `app`)."""
    grouped: dict[tuple[int, str], tuple[DOMNode, Binding, list[str]]] = {}
    for active in bindings.values():
        binding, node = active.binding, active.node
        if not active.enabled or not binding.description or binding.action in _LEFT_OUT:
            continue
        action = binding.action
        if action.startswith("app."):  # `q` on a screen and `ctrl+c` on the app: one command
            node, action = app, action.removeprefix("app.")
            binding = Binding(
                binding.key, action, binding.description, key_display=binding.key_display
            )
        entry = grouped.setdefault((id(node), action), (node, binding, []))
        shown = key_text(Binding(binding.key, binding.action, key_display=binding.key_display))
        if shown not in entry[2]:
            entry[2].append(shown)
    return [
        BindingCommand(
            binding.description,
            " ".join(sorted(keys, key=lambda key: (len(key), key))),  # `j ↓`, `q ctrl+q`
            binding.action,
            node,
            binding.tooltip,
        )
        for node, binding, keys in grouped.values()
    ]


class BindingCommands(Provider):
    """The palette's source of commands: the bindings active on the screen it opened on."""

    def _commands(self) -> list[BindingCommand]:
        return binding_commands(self.screen.active_bindings, self.app)

    def _runner(self, command: BindingCommand) -> Callable[[], Coroutine[Any, Any, bool]]:
        async def run() -> bool:
            return await self.app.run_action(command.action, command.node)

        return run

    @staticmethod
    def _display(command: BindingCommand, title: Content | None = None) -> Content:
        shown = title if title is not None else Content(command.description)
        return Content.assemble(shown, "  ", (command.keys, "bold"))

    async def discover(self) -> Hits:
        for command in sorted(self._commands(), key=lambda c: c.description.lower()):
            yield DiscoveryHit(
                self._display(command),
                self._runner(command),
                text=command.title,
                help=command.help,
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score = matcher.match(command.description)
            if score > 0:
                yield Hit(
                    score,
                    self._display(command, matcher.highlight(command.description)),
                    self._runner(command),
                    text=command.title,
                    help=command.help,
                )
