"""Editing one value of a streamed answer in the debugger: mapped to the answer's final
object, kept as `edit(...)`, and accumulated by the real SDK as edited (issue 22, point 6).

The stream is recorded from a real SDK client; the edit is made as the detail pane makes
it (a path into the recorded output and a value); the fork then serves it to the same
SDK, whose every view (deltas, done events, final response) must hold the new value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from toolreplay_tui.model.answers import StreamEdit, edit_patch, patched_output, stream_edit
from toolreplay_tui.model.jsonpaths import PathError, set_at

import toolreplay
from examples.local_openai import LocalOpenAI, refusing
from tests.adapters.support import sync_client
from tests.adapters.test_stream_edits import CHAT_TEXT, RECORDED_TEXT, sync_app
from toolreplay.adapters.openai import instrument

NEW = "Held for review."


@pytest.fixture
def source(tmp_path: Path) -> toolreplay.Trace:
    path = tmp_path / "source.trp"
    api = LocalOpenAI(RECORDED_TEXT, deltas=7, chat_texts=(CHAT_TEXT,))
    with toolreplay.record(path):
        sync_app(instrument(sync_client(api)))
    return toolreplay.read_trace(path)


def output_of(operation: toolreplay.Operation) -> Any:
    outcome = operation.outcome
    assert isinstance(outcome, toolreplay.Returned)
    return outcome.value


def where(output: Any, kind: str, key: str | None = None) -> list[int]:
    return [
        number
        for number, event in enumerate(output["events"])
        for data in [event.get("data", {})]  # the closing `[DONE]` has text, not data
        if data.get("type", data.get("object")) == kind and (key is None or key in data)
    ]


def forked(source: toolreplay.Trace, patches: list[toolreplay.Patch], tmp_path: Path) -> Any:
    sent: list[Any] = []
    with toolreplay.fork(source, tmp_path / "branch.trp", patches=patches):
        seen = sync_app(instrument(sync_client(refusing(sent))))
    assert sent == []
    return seen


def test_an_edit_of_the_final_response_or_a_done_event_is_an_edit_of_the_answer(
    source: toolreplay.Trace,
) -> None:
    output = output_of(source.operations[0])
    (last,) = where(output, "response.completed")
    at_final = ("events", last, "data", "response", "output", 0, "content", 0, "text")
    assert stream_edit(output, at_final, NEW) == StreamEdit("$.output[0].content[0].text", NEW)
    (done,) = where(output, "response.output_text.done")
    assert stream_edit(output, ("events", done, "data", "text"), NEW) == StreamEdit(
        "$.output[0].content[0].text", NEW
    )
    (item,) = where(output, "response.output_item.done")
    assert stream_edit(output, ("events", item, "data", "item", "status"), "x") == StreamEdit(
        "$.output[0].status", "x"
    )
    # A JSON body is edited as it is.
    assert stream_edit({"status": 200, "body": {}}, ("body",), {}) is None


def test_an_edit_of_a_delta_changes_that_piece_of_the_whole_text(
    source: toolreplay.Trace,
) -> None:
    output = output_of(source.operations[0])
    deltas = where(output, "response.output_text.delta")
    pieces = [output["events"][n]["data"]["delta"] for n in deltas]
    assert "".join(pieces) == RECORDED_TEXT
    assert len(pieces) == 7
    edited = stream_edit(output, ("events", deltas[0], "data", "delta"), "Refused: ")
    assert edited == StreamEdit("$.output[0].content[0].text", "Refused: " + "".join(pieces[1:]))

    chat = output_of(source.operations[1])
    chunks = where(chat, "chat.completion.chunk")
    second = chunks[1]  # the first carries the role, the second the first word
    piece = chat["events"][second]["data"]["choices"][0]["delta"]["content"]
    mapped = stream_edit(chat, ("events", second, "data", "choices", 0, "delta", "content"), "!")
    assert mapped == StreamEdit("$.choices[0].message.content", CHAT_TEXT.replace(piece, "!", 1))
    assert stream_edit(chat, ("events", second, "data", "model"), "gpt-x") == StreamEdit(
        "$.model", "gpt-x"
    )


def test_an_events_bookkeeping_is_refused_with_what_to_edit_instead(
    source: toolreplay.Trace,
) -> None:
    output = output_of(source.operations[0])
    (created,) = where(output, "response.created")
    with pytest.raises(PathError, match="no part of the final answer"):
        stream_edit(output, ("events", created, "data", "sequence_number"), 99)
    with pytest.raises(PathError, match="give a string"):
        deltas = where(output, "response.output_text.delta")
        stream_edit(output, ("events", deltas[0], "data", "delta"), 3)


def test_edits_merge_into_one_edit_and_the_sdk_accumulates_them(
    source: toolreplay.Trace, tmp_path: Path
) -> None:
    operation = source.operations[0]
    output = output_of(operation)
    (last,) = where(output, "response.completed")
    first = edit_patch(operation, None, output, StreamEdit("$.output[0].content[0].text", NEW))
    assert first.recipe == "edit"
    shown = patched_output(operation, first, source)
    both = edit_patch(operation, first, shown, StreamEdit("$.model", "gpt-5-mini-2026"))
    assert both.value == {"$.output[0].content[0].text": NEW, "$.model": "gpt-5-mini-2026"}
    # What the detail pane shows is the edited stream, and its final response agrees.
    shown: Any = patched_output(operation, both, source)
    assert shown["events"][last]["data"]["response"]["output"][0]["content"][0]["text"] == NEW

    chat_operation = source.operations[1]
    chat = output_of(chat_operation)
    chunk = where(chat, "chat.completion.chunk")[1]
    mapped = stream_edit(chat, ("events", chunk, "data", "choices", 0, "delta", "content"), "")
    assert mapped is not None
    chat_patch = edit_patch(chat_operation, None, chat, StreamEdit(mapped.path, "No."))

    seen = forked(source, [both, chat_patch], tmp_path)
    assert seen["deltas"] == seen["output_text"] == NEW
    assert seen["done"] == seen["parts"] == seen["items"] == [NEW]
    assert seen["response"]["model"] == "gpt-5-mini-2026"
    assert seen["chat_deltas"] == seen["content"] == "No."


def test_editing_one_event_alone_is_what_the_mapping_prevents(
    source: toolreplay.Trace, tmp_path: Path
) -> None:
    # Without the mapping (one event's value set in the recorded output) the SDK reads
    # the old text from the deltas while the final response says the new one.
    operation = source.operations[0]
    output = output_of(operation)
    (last,) = where(output, "response.completed")
    path = ("events", last, "data", "response", "output", 0, "content", 0, "text")
    one_event = toolreplay.replace_output(
        effect=operation.effect,
        inputs=operation.inputs,
        occurrence=operation.identity.occurrence,
        value=set_at(output, path, NEW),
    )
    seen = forked(source, [one_event], tmp_path)
    assert seen["deltas"] == RECORDED_TEXT != seen["output_text"]
