"""The what-if at a new model call, driven by keys (Pilot) on the bundled Agents SDK example.

The order lookup's answer is changed in the detail pane; the fork stops at the model
request that carries it, a call the recording never made. Each key answers it (call a
tool, answer with text, reuse the recorded answer, ask the model live), the reply is
shown before the fork runs again, and the run goes on. Every fork is a real child
process running the unmodified agent.
"""

from __future__ import annotations

import json
from typing import Any

from textual.pilot import Pilot
from textual.widgets import OptionList
from toolreplay_tui.app import ToolReplayApp
from toolreplay_tui.screens.dialogs import PromptScreen
from toolreplay_tui.screens.editor import EditorScreen
from toolreplay_tui.screens.patches import PatchesScreen
from toolreplay_tui.screens.reply import ReplyPreviewScreen, ToolPickerScreen
from toolreplay_tui.screens.run import RunScreen

import toolreplay
from tests.adapters.real_clients import needs_openai_3
from tests.tui.agent_project import MODEL, ORDER_ID, AgentProject, agent_env
from tests.tui.pilot import SIZE, loaded, pilot_test, text_of, wait_for

pytestmark = needs_openai_3

RECEIPT = {"refund_id": f"rf_{ORDER_ID}", "status": "held_for_review", "amount": 250.0}


def agent_app(agent: AgentProject, **env: str) -> ToolReplayApp:
    return ToolReplayApp(
        agent.trace,
        cwd=agent.root,
        env={**agent_env(), **env},
        workdir=agent.root / ".tr",
        blink_cursors=False,
    )


async def fork_at_new_model_call(pilot: Pilot[Any]) -> RunScreen:
    """The lookup's total becomes 250 (by keys, in the detail pane), then `f`: the fork
    stops at the model request carrying it."""
    app = await loaded(pilot)
    assert isinstance(app, ToolReplayApp)
    await pilot.press("j", "tab", "s", *"1200", "enter", "enter", *"250.0", "enter", "f")
    await wait_for(pilot, lambda: app.last_fork is not None, what="the fork")
    screen = app.screen
    assert isinstance(screen, RunScreen)
    await wait_for(pilot, lambda: screen.stopped_at is not None, what="the stop")
    assert screen.model_call is not None
    assert screen.model_call.effect == MODEL
    return screen


async def forked_by(pilot: Pilot[Any], *keys: str) -> toolreplay.Trace:
    """Press `keys`, the last of which starts a fork; wait for it: the branch it wrote."""
    app = pilot.app
    assert isinstance(app, ToolReplayApp)
    before = app.last_fork
    await pilot.press(*keys)
    await wait_for(pilot, lambda: app.last_fork is not before, what="the next fork")
    assert app.last_fork is not None
    return toolreplay.read_trace(app.last_fork.branch)


def offer(app: ToolReplayApp) -> str:
    return text_of(app, "#run-offer")


@pilot_test
async def test_calling_a_tool_answers_the_model_and_every_patch_kind_saves_and_loads(
    agent: AgentProject,
) -> None:
    app = agent_app(agent)
    async with app.run_test(size=SIZE) as pilot:
        await fork_at_new_model_call(pilot)
        shown = offer(app)
        assert "tools: lookup_order, issue_refund" in shown
        assert "tool lookup_order: {'order_id': 8812, 'total': 250.0" in shown
        assert "r reuses the recorded answer of #2" in shown

        await pilot.press("c")  # call a tool: the request's tools are listed
        assert isinstance(app.screen, ToolPickerScreen)
        assert app.screen.query_one(OptionList).option_count == 2
        await pilot.press("down", "enter")
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        assert json.loads(editor.text_area.text) == {"order_id": ORDER_ID, "amount": 1200.0}
        # Arguments the request refuses reopen the editor, saying why (which refusals,
        # test_model_new_call; the editor's own JSON errors, test_app_edit).
        await pilot.press("f7", *"[8812]", "ctrl+s")
        assert isinstance(app.screen, EditorScreen)  # arguments are an object
        assert "a JSON object" in str(app.screen.query_one("#editor-problem").render())
        await pilot.press("f7", *'{"order_id": 8812, "amount": 250.0}', "ctrl+s")
        preview = app.screen
        assert isinstance(preview, ReplyPreviewScreen)
        reply = text_of(app, "#reply-preview")
        assert "→ issue_refund" in reply
        assert '"amount": 250.0' in reply
        assert len(app.pending) == 1  # nothing added before enter

        # Forks again: billing is now asked for 250, a new call too, which the agent
        # catches (its tools' errors become messages); the run names it all the same.
        branch = await forked_by(pilot, "enter")
        stop = app.screen
        assert isinstance(stop, RunScreen)
        assert stop.stopped_at is not None
        assert stop.stopped_at.effect == "billing.refund.issue"
        assert stop.model_call is None  # a tool: only s and z
        assert "(then raised TypeError)" in offer(app)
        assert [(op.effect, op.origin) for op in branch.operations][2] == (MODEL, "supplied")
        branch = await forked_by(pilot, "s", "f7", *json.dumps(RECEIPT), "ctrl+s")
        assert app.last_fork is not None
        assert app.last_fork.result.ok, app.last_fork.result.stderr
        assert app.last_fork.result.return_value == {
            "order": ORDER_ID,
            "billing": "held_for_review",
            "customer_told": "Your refund is in review.",
        }
        assert [op.origin for op in branch.operations] == [
            "recorded",
            "patched",
            "supplied",
            "supplied",
        ]

        # The pending patches: the edit, the reply for the next new model call, billing.
        await pilot.press("escape", "L")
        assert isinstance(app.screen, PatchesScreen)
        listing = app.screen.query_one(OptionList)
        rows = [str(listing.get_option_at_index(n).prompt) for n in range(3)]
        assert "replaced output" in rows[0]
        assert "shop.order.lookup occ 0" in rows[0]
        assert f"next new call #1 of {MODEL}" in rows[1]
        assert "reply → issue_refund" in rows[1]
        assert "billing.refund.issue occ 0" in rows[2]
        pending = list(app.pending)
        await pilot.press("escape", "w", "enter")  # the suggested new patch file
        saved = app.pending.saved_path
        assert saved is not None
        assert toolreplay.read_patches(saved) == pending
        await pilot.press("o", "enter")  # load it back: every patch, none skipped
        assert list(app.pending) == pending
        assert "skipped" not in app.message_log[-1].text


@pilot_test
async def test_a_text_answer_is_checked_against_the_request_and_previewed_first(
    agent: AgentProject,
) -> None:
    app = agent_app(agent)
    async with app.run_test(size=SIZE) as pilot:
        await fork_at_new_model_call(pilot)
        await pilot.press("t")
        assert isinstance(app.screen, PromptScreen)
        # The agent's output type makes the request ask for JSON: plain text is refused.
        await pilot.press(*"Refund held.", "enter")
        assert isinstance(app.screen, PromptScreen)
        assert "asks for a JSON answer" in text_of(app, "#prompt-problem")
        await pilot.press("ctrl+u", *json.dumps(RECEIPT), "enter")
        assert isinstance(app.screen, ReplyPreviewScreen)
        assert '"status": "held_for_review"' in text_of(app, "#reply-preview")
        await pilot.press("escape")  # back: nothing added, nothing run
        assert len(app.pending) == 1
        assert not isinstance(app.screen, (ReplyPreviewScreen, RunScreen))

        await pilot.press("f")
        await wait_for(pilot, lambda: getattr(app.screen, "model_call", None) is not None)
        branch = await forked_by(pilot, "t", *json.dumps(RECEIPT), "enter", "enter")
        assert app.last_fork is not None
        assert app.last_fork.result.ok, app.last_fork.result.stderr
        # The model's final answer is the receipt: billing is never called.
        assert app.last_fork.result.return_value == {
            "order": ORDER_ID,
            "billing": "held_for_review",
            "customer_told": "Your refund is in review.",
        }
        assert [op.effect for op in branch.operations] == [MODEL, "shop.order.lookup", MODEL]


@pilot_test
async def test_the_recorded_answer_is_reused_and_the_run_goes_on_as_recorded(
    agent: AgentProject,
) -> None:
    app = agent_app(agent, OPENAI_API_KEY="sk-never-on-screen-0123456789")
    async with app.run_test(size=SIZE) as pilot:
        await fork_at_new_model_call(pilot)
        # Whether a key is set, from the fork's environment; never the key itself.
        assert "OPENAI_API_KEY is set in the environment forks run with" in offer(app)
        assert "sk-never-on-screen" not in app.export_screenshot()
        await pilot.press("r")
        assert isinstance(app.screen, ReplyPreviewScreen)
        assert '"amount": 1200.0' in text_of(app, "#reply-preview")
        branch = await forked_by(pilot, "enter")
        assert app.last_fork is not None
        assert app.last_fork.result.ok, app.last_fork.result.stderr
        # The recorded answer calls billing with the recorded amount: that call replays.
        assert [op.origin for op in branch.operations] == [
            "recorded",
            "patched",
            "supplied",
            "recorded",
        ]


@pilot_test
async def test_asking_the_model_live_sends_only_the_new_request_and_stays_live(
    agent: AgentProject,
) -> None:
    app = agent_app(agent)
    async with app.run_test(size=SIZE) as pilot:
        await fork_at_new_model_call(pilot)
        assert "a asks the model live: OPENAI_API_KEY is not set" in offer(app)
        # The example's runner serves the agent from the scripted model in process: a
        # live call reaches it through the client's own transport, never the network.
        branch = await forked_by(pilot, "a")
        assert app.live_effects == [MODEL]
        assert app.last_fork is not None
        assert "--live" in app.last_fork.result.argv
        # The model read the new total and asked billing for it: a new call, stopped at.
        assert [(op.effect, op.origin) for op in branch.operations] == [
            (MODEL, "recorded"),
            ("shop.order.lookup", "patched"),
            (MODEL, "live"),
        ]
        stop = app.screen
        assert isinstance(stop, RunScreen)
        assert stop.stopped_at is not None
        assert stop.stopped_at.inputs == {"order_id": ORDER_ID, "amount": 250.0}
        branch = await forked_by(pilot, "s", "f7", *json.dumps(RECEIPT), "ctrl+s")
        assert app.last_fork is not None
        assert app.last_fork.result.ok, app.last_fork.result.stderr
        assert app.last_fork.result.counts["operations_live"] == 1
        assert f"{MODEL} live in forks" in app.status_text().plain

        # L lists the live effect; x there stops sending its new calls.
        await pilot.press("escape", "L")
        assert isinstance(app.screen, PatchesScreen)
        listing = app.screen.query_one(OptionList)
        last = listing.option_count - 1
        assert MODEL in str(listing.get_option_at_index(last).prompt)
        await pilot.press(*["down"] * last, "x")
        assert app.live_effects == []
