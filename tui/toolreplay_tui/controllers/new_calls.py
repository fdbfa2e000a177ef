"""Answering the new call a fork stopped at (a call the recording never made): its
output or an error supplied, or for a model call, the model asked live, a line of
text, a call of one of its tools or the nearest recorded answer; each reply is
shown before the fork runs again with it."""

from __future__ import annotations

from toolreplay import NonPortableValueError, OutputPatch, PatchError
from toolreplay_tui.controllers.host import Host
from toolreplay_tui.controllers.patches import PatchesController, error_problem
from toolreplay_tui.controllers.runs import Runs
from toolreplay_tui.model.jsontext import format_json
from toolreplay_tui.model.new_call import (
    NewModelCall,
    ReplyPreview,
    new_model_call,
    position_in_source,
    preview,
)
from toolreplay_tui.model.stops import UnrecordedCall
from toolreplay_tui.screens.dialogs import PromptScreen
from toolreplay_tui.screens.editor import Edited, EditorScreen
from toolreplay_tui.screens.reply import ReplyPreviewScreen, ToolPickerScreen
from toolreplay_tui.screens.run import NextStep

__all__ = ["NewCallAnswers", "wants_json"]

NOT_RUN = "stopped: the fork was not run again"


def wants_json(model: NewModelCall) -> bool:
    """Whether the request asks for a JSON answer (structured output)."""
    body = model.call.inputs.get("body")
    request = body if isinstance(body, dict) else {}
    form = request.get("text") if model.api == "responses" else request
    found = (
        form.get("format" if model.api == "responses" else "response_format")
        if isinstance(form, dict)
        else None
    )
    return isinstance(found, dict) and found.get("type") in ("json_schema", "json_object")


class NewCallAnswers:
    """Each answer becomes a pending patch, and the fork runs again."""

    def __init__(self, host: Host, patches: PatchesController, runs: Runs) -> None:
        self.host = host
        self.patches = patches
        self.runs = runs

    def answer(self, step: NextStep, call: UnrecordedCall) -> None:
        """Take the `step` chosen on the run screen that stopped at `call` (a step that
        answers a model call does nothing at another call)."""
        if step in ("supply_output", "supply_error"):
            (self.supply_output if step == "supply_output" else self.supply_error)(call)
            return
        model = new_model_call(call)
        if model is None:
            return
        if step == "ask_live":
            self.ask_live(model)
        elif step == "answer_text":
            self.answer_text(model)
        elif step == "call_tool":
            self.call_tool(model)
        elif step == "reuse_answer":
            self.reuse_answer(model)

    # --- any call: its output or an error -----------------------------------------------

    def supply_output(self, call: UnrecordedCall) -> None:
        """Open the editor on the call's output; saving supplies it and forks again."""
        host = self.host

        def edited(result: Edited | None) -> None:
            if result is None:
                host.changed(NOT_RUN)
                return
            try:
                patch = self.patches.pending.supply(
                    call.effect, call.inputs, call.occurrence, result.value
                )
            except (PatchError, NonPortableValueError) as error:
                host.changed(str(error), error=True)
                return
            host.changed(f"supplied {call.effect}: pending patch {patch.patch_id}")
            self.runs.fork_again()

        start = f"#{call.nearest_id}'s recorded output" if call.nearest_id is not None else "null"
        host.push_screen(
            EditorScreen(
                None,
                call.editor_text(),
                heading=(
                    f"Supply the output of {call.effect} occurrence {call.occurrence}, a call "
                    f"the recording never made (starting from {start})"
                ),
                select_all=call.nearest_id is None,  # typing replaces the `null`
            ),
            edited,
        )

    def supply_error(self, call: UnrecordedCall) -> None:
        """Ask for `Type: message`; the call then raises it, and the fork runs again."""
        host = self.host

        def answered(value: str | None) -> None:
            if not value:
                host.changed(NOT_RUN)
                return
            try:
                patch = self.patches.pending.supply_failure(
                    call.effect, call.inputs, call.occurrence, value
                )
            except (PatchError, NonPortableValueError) as error:
                host.changed(str(error), error=True)
                return
            host.changed(f"supplied an error for {call.effect}: pending patch {patch.patch_id}")
            self.runs.fork_again()

        host.push_screen(
            PromptScreen(
                f"{call.effect} occurrence {call.occurrence} raises (Type: message; TimeoutError, "
                "ConnectionError… are raised as themselves, other names as ReplayedEffectError):",
                f"TimeoutError: {call.effect} timed out",
                check=error_problem,
            ),
            answered,
        )

    # --- a model call ----------------------------------------------------------------------

    def ask_live(self, model: NewModelCall) -> None:
        """`a`: fork again with the model call's effect live (its new calls are sent
        through the application's own client); it stays live until removed (L, x)."""
        self.runs.go_live(model.effect)
        self.host.changed(f"{model.effect} goes live in this fork and the next ones (L lists it)")
        self.runs.fork_again()

    def answer_text(self, model: NewModelCall) -> None:
        """`t`: a line of text, shown as the reply the fork will send, then forked."""
        made: dict[str, tuple[OutputPatch, ReplyPreview]] = {}

        def check(value: str) -> str | None:
            try:
                patch = model.text_reply(value)
                made[value] = (patch, self._preview(model, patch))
            except (PatchError, NonPortableValueError) as error:
                return str(error)
            return None

        def typed(value: str | None) -> None:
            if value is None or value not in made:
                self.host.changed(NOT_RUN)
                return
            patch, shown = made[value]
            self._offer_reply(model, patch, shown, "Answer with this text")

        wants = " (the request asks for JSON: type the JSON text)" if wants_json(model) else ""
        self.host.push_screen(
            PromptScreen(
                f"The model's answer to this {model.effect} call, one line{wants}:",
                placeholder="what the model says",
                check=check,
            ),
            typed,
        )

    def call_tool(self, model: NewModelCall) -> None:
        """`c`: pick one of the request's tools, write its arguments (JSON), see the reply."""
        if not model.tools:
            self.host.changed(f"this {model.effect} request offers no function tool", error=True)
            return

        def picked(name: str | None) -> None:
            if name is None:
                self.host.changed(NOT_RUN)
                return
            self._edit_arguments(model, name, model.arguments_template(name), None)

        self.host.push_screen(ToolPickerScreen(model.effect, model.tools), picked)

    def _edit_arguments(
        self, model: NewModelCall, name: str, text: str, problem: str | None
    ) -> None:
        def edited(result: Edited | None) -> None:
            if result is None:
                self.host.changed(NOT_RUN)
                return
            arguments = format_json(result.value)
            try:
                patch = model.tool_reply(name, arguments)
                shown = self._preview(model, patch)
            except (PatchError, NonPortableValueError) as error:
                self._edit_arguments(model, name, arguments, f"not used: {error}")
                return
            self._offer_reply(model, patch, shown, f"Answer with a call of {name}")

        self.host.push_screen(
            EditorScreen(
                None,
                text,
                heading=f"The arguments the model calls {name} with (a JSON object)",
                problem=problem,
                save_label="uses these arguments (the reply is shown next)",
            ),
            edited,
        )

    def reuse_answer(self, model: NewModelCall) -> None:
        """`r`: the nearest recorded answer of this endpoint, shown, then forked."""
        patch = model.reuse_reply()
        answer = model.recorded_answer()
        if patch is None or answer is None:
            self.host.changed("no recorded answer of this endpoint fits the request", error=True)
            return
        try:
            shown = self._preview(model, patch)
        except (PatchError, NonPortableValueError) as error:
            self.host.changed(str(error), error=True)
            return
        self._offer_reply(
            model, patch, shown, f"Answer with the recorded answer of #{answer.logical_id}"
        )

    def _preview(self, model: NewModelCall, patch: OutputPatch) -> ReplyPreview:
        """The reply `patch` gives the call, as the fork will resolve it."""
        trace = self.host.trace
        assert trace is not None
        fork = self.runs.last_fork
        near = position_in_source(fork.branch) if fork is not None else None
        return preview(model, patch, trace, near)

    def _offer_reply(
        self, model: NewModelCall, patch: OutputPatch, shown: ReplyPreview, heading: str
    ) -> None:
        pending = self.patches.pending
        number = pending.next_calls(model.effect) + 1

        def answered(accept: bool | None) -> None:
            if not accept:
                self.host.changed("stopped: nothing was added, the fork was not run again")
                return
            pending.put(patch)
            self.host.changed(
                f"pending patch {patch.patch_id} answers new call #{number} of {model.effect}"
            )
            self.runs.fork_again()

        described = f"{patch.patch_id}  supplied output  next new call #{number} of {model.effect}"
        self.host.push_screen(
            ReplyPreviewScreen(
                f"{heading}: the fork answers {model.effect} with", shown, described
            ),
            answered,
        )
