"""The incident replay demo: its HTTP API, and the page in a real headless Chromium."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import toolreplay

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"


class Demo:
    """The demo server as a user starts it, in its own process on a free loopback port."""

    def __init__(self, temporary: Path, *options: str) -> None:
        environment = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
        environment["TMPDIR"] = str(temporary)  # where the server keeps its scenario
        self.process = subprocess.Popen(
            [sys.executable, "-m", "examples.incident_replay_demo.server", "--port", "0", *options],
            cwd=ROOT,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", first)
        assert match, f"the server did not start: {first!r} {self.process.stderr}"
        self.url = match.group(0)

    def request(
        self, method: str, path: str, body: bytes | None = None, **headers: str
    ) -> tuple[int, Any]:
        request = urllib.request.Request(self.url + path, data=body, method=method)
        for name, value in headers.items():
            request.add_header(name.replace("_", "-"), value)
        if body is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def act(self, action: str, body: bytes | None = b"{}", **headers: str) -> tuple[int, Any]:
        return self.request("POST", f"/api/actions/{action}", body, **headers)

    @property
    def host(self) -> str:
        return self.url.removeprefix("http://")

    def raw(self, head: str, body: bytes = b"") -> tuple[int, Any]:
        """Send exactly these bytes, close the sending side, and read the whole answer."""
        host, port = self.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as connection:
            connection.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + body)
            connection.shutdown(socket.SHUT_WR)  # the server reads to the end of what was sent
            answer = b""
            while chunk := connection.recv(65536):
                answer += chunk
        status_line, _, rest = answer.partition(b"\r\n")
        return int(status_line.split()[1]), json.loads(rest.partition(b"\r\n\r\n")[2])

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    temporary = tmp_path / "server-tmp"
    temporary.mkdir()
    server = Demo(temporary)
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.stop()


INCIDENT_EFFECTS = [
    "crm.customer.get",
    "policy.refund.get",
    "openai.responses.create",
    "billing.refund.create",
    "notify.customer",
]
REVIEW_ANSWER = {"ticket": "rv_ord_1042", "queue": "refunds"}


def test_the_api_walks_the_incident_with_the_real_library(demo: Demo) -> None:
    status, state = demo.request("GET", "/api/state")
    assert status == 200
    assert (state["next"], state["asking"]) == ("replay", None)
    assert state["results"]["incident"] == {
        "decision": "approved",
        "amount": 1200.0,
        "operations": 5,
        "effects": INCIDENT_EFFECTS,
        "provider_calls": 1,
    }
    status, state = demo.act("replay")
    assert status == 200
    assert state["results"]["replay"] == {
        "decision": "approved",
        "operations_replayed": 5,
        "provider_calls": 0,
    }

    # The corrected run queues the order for review: the fork stops and asks.
    status, state = demo.act("correct")
    assert status == 200
    assert state["asking"] == {
        "effect": "review.queue.add",
        "occurrence": 0,
        "inputs": {
            "order_id": "ord_1042",
            "amount": 1200.0,
            "reason": "above the manual review limit",
        },
        "suggestion": None,  # the recording never called the queue
    }
    assert state["results"]["correct"] == {"stopped_at": "review.queue.add", "supplied": []}
    assert (state["next"], state["completed"]) == ("correct", ["replay"])
    status, error = demo.act("compare")
    assert status == 409
    assert "the next step is correct" in error["error"]["message"]

    status, state = demo.act("supply", json.dumps({"value": REVIEW_ANSWER}).encode())
    assert status == 200
    # Then at the new notice; its answer starts from the recorded notice's.
    assert state["asking"]["effect"] == "notify.customer"
    assert "being reviewed" in state["asking"]["inputs"]["message"]
    assert state["asking"]["suggestion"] == {"sent": True, "channel": "email"}
    status, state = demo.act(
        "supply", json.dumps({"value": state["asking"]["suggestion"]}).encode()
    )
    assert status == 200
    assert state["asking"] is None
    assert state["results"]["correct"] == {
        "decision": "manual_review",
        "patched_effect": "openai.responses.create",
        "patched_operations": 3,
        "supplied": ["review.queue.add", "notify.customer"],
        "not_called": ["billing.refund.create", "notify.customer"],
        "provider_calls": 0,
    }
    status, error = demo.act("supply", b'{"value": 1}')
    assert status == 409
    assert "not waiting for a call's answer" in error["error"]["message"]

    status, state = demo.act("compare")
    compare = state["results"]["compare"]
    assert (compare["effect"], compare["path"]) == (
        "openai.responses.create",
        "$.output.body.output[1].content[0].text",
    )
    assert (compare["source"], compare["target"], compare["from_patch"]) == (
        "approve",
        "manual_review",
        True,
    )
    assert compare["missing"] == ["billing.refund.create"]
    assert compare["added"] == [{"effect": "review.queue.add", "origin": "supplied"}]
    assert compare["asked_differently"] == [
        {"effect": "notify.customer", "origin": "supplied", "paths": ["$.inputs.message"]}
    ]
    status, state = demo.act("promote")
    promote = state["results"]["promote"]
    assert promote["verified"] is True
    assert promote["files"] == 3
    assert promote["returned"] == {
        "order_id": "ord_1042",
        "amount": 1200.0,
        "decision": "manual_review",
        "review_ticket": "rv_ord_1042",
    }
    assert state["next"] is None

    everything = json.dumps(state)
    assert "sk-" not in everything
    assert "/tmp" not in everything
    assert ".trp" not in everything
    assert "http" not in everything.lower()

    status, state = demo.act("reset")
    assert status == 200
    assert (state["completed"], state["asking"]) == ([], None)
    assert state["next"] == "replay"
    assert list(state["results"]) == ["incident"]
    assert demo.stop() == 0


def test_a_supplied_answer_is_checked_before_the_fork_runs_again(demo: Demo) -> None:
    demo.act("replay")
    status, state = demo.act("correct")
    assert state["asking"]["effect"] == "review.queue.add"
    refused = {
        b'{"value": NaN}': "NaN is not a number",
        b'{"value": 1e400}': "not portable",
        b'{"answer": 1}': 'exactly one key, "value"',
        b"{}": 'exactly one key, "value"',
    }
    for body, message in refused.items():
        status, error = demo.act("supply", body)
        assert status == 400, body
        assert message in error["error"]["message"], body
    status, state = demo.request("GET", "/api/state")
    assert state["asking"]["effect"] == "review.queue.add"  # still asking, nothing supplied
    assert state["results"]["correct"]["supplied"] == []


def test_the_scenario_folder_lives_only_as_long_as_the_server(demo: Demo, tmp_path: Path) -> None:
    temporary = tmp_path / "server-tmp"
    assert [p.name[:16] for p in temporary.iterdir()] == ["toolreplay-demo-"]
    demo.act("replay")
    assert demo.stop() == 0
    assert list(temporary.iterdir()) == []


def test_bad_requests_get_json_errors_and_the_server_keeps_serving(demo: Demo) -> None:
    assert demo.act("compare") == (
        409,
        {
            "error": {
                "status": 409,
                "message": "compare cannot run now: the next step is replay; "
                "use Reset demo to start over",
            }
        },
    )
    status, error = demo.act("launch_missiles")
    assert status == 404
    assert "unknown action" in error["error"]["message"]
    status, error = demo.act("replay", b"{not json")
    assert status == 400
    assert error["error"]["message"] == "the body is not valid JSON"
    status, error = demo.act("replay", b"[1, 2]")
    assert status == 400
    assert "JSON object" in error["error"]["message"]
    status, error = demo.request("GET", "/api/nothing")
    assert status == 404
    status, error = demo.request("PUT", "/api/actions/replay", b"{}")
    assert status == 405
    status, state = demo.act("replay")  # still serving, still in order
    assert status == 200
    assert state["completed"] == ["replay"]
    status, _page = demo.request("GET", "/api/state")
    assert status == 200


def test_bodies_that_do_not_match_their_length_run_nothing(demo: Demo) -> None:
    post = f"POST /api/actions/replay HTTP/1.1\nHost: {demo.host}\nContent-Type: application/json\n"
    assert demo.raw(post + "Content-Length: -1\n") == (
        400,
        {"error": {"status": 400, "message": "Content-Length is negative"}},
    )
    assert demo.raw(post + "Content-Length: 10\n", b"{}") == (
        400,
        {"error": {"status": 400, "message": "the body ended after 2 of 10 bytes"}},
    )
    assert demo.raw(post + "Content-Length: 2\n", b"{}")[0] == 200  # the same, whole: it runs
    status, state = demo.request("GET", "/api/state")
    assert (status, state["completed"]) == (200, ["replay"])


def test_a_failed_step_shows_no_path_and_can_be_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from examples.incident_replay_demo import refund_app
    from examples.incident_replay_demo.scenario import DemoError, DemoScenario

    folder = tmp_path / "scenario"
    scenario = DemoScenario(folder)
    scenario.run("replay")
    scenario.run("correct")
    scenario.run("supply", {"value": REVIEW_ANSWER})
    decide = refund_app.decide_refund

    def crashing(client: Any) -> Any:
        decide(client)
        raise OSError(5, "Input/output error", str(folder / "notes.txt"))

    monkeypatch.setattr(refund_app, "decide_refund", crashing)
    with pytest.raises(DemoError) as caught:
        scenario.run("supply", {"value": {"sent": True, "channel": "email"}})
    assert caught.value.status == 500
    assert caught.value.message == "OSError: [Errno 5] Input/output error: '<scenario>/notes.txt'"
    assert not (folder / "corrected.trp").exists()  # the partial branch is gone...
    monkeypatch.setattr(refund_app, "decide_refund", decide)
    assert scenario.state()["asking"]["effect"] == "notify.customer"  # still asking
    # ...so the answer can be supplied again without a reset
    state = scenario.run("supply", {"value": {"sent": True, "channel": "email"}})
    assert state["results"]["correct"]["decision"] == "manual_review"

    def failing_record(path: Path, **options: Any) -> Any:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr("toolreplay.record", failing_record)
    with pytest.raises(DemoError) as caught:
        scenario.reset()
    assert str(tmp_path) not in caught.value.message
    assert caught.value.message == (
        "OSError: [Errno 28] No space left on device: '<scenario>/incident.trp'"
    )
    assert scenario.state()["results"] == {}  # nothing stale is shown as recorded


def test_requests_from_other_sites_or_to_other_hosts_are_refused(demo: Demo) -> None:
    own = demo.url
    refused = [
        demo.act("replay", Origin="https://evil.example"),
        demo.act("replay", Origin="null"),  # a sandboxed frame, a data: URL
        demo.act("replay", Origin=own.replace("127.0.0.1", "localhost")),  # another origin
        demo.act("replay", Sec_Fetch_Site="cross-site"),
        demo.act("replay", Sec_Fetch_Site="same-site"),  # another port of this machine
        demo.act("replay", Host="evil.example"),  # DNS rebinding: a name that resolves here
        demo.request("GET", "/api/state", Host="evil.example"),
        demo.request("GET", "/", Host=f"evil.example:{own.rsplit(':', 1)[1]}"),
        demo.request("PUT", "/api/actions/replay", b"{}", Origin="https://evil.example"),
    ]
    assert [status for status, _ in refused] == [403] * len(refused)
    assert "only this page may call the demo" in refused[0][1]["error"]["message"]
    assert "is not this server" in refused[5][1]["error"]["message"]
    no_host = demo.raw("GET /api/state HTTP/1.1\nConnection: close\n")
    assert no_host[0] == 403
    status, state = demo.request("GET", "/api/state")
    assert (status, state["completed"]) == (200, [])  # nothing refused ran

    # The page itself, as a browser sends it, at either name of the address.
    status, state = demo.act("replay", Origin=own, Sec_Fetch_Site="same-origin")
    assert (status, state["completed"]) == (200, ["replay"])
    localhost = own.replace("127.0.0.1", "localhost").removeprefix("http://")
    status, state = demo.request("GET", "/api/state", Host=localhost, Sec_Fetch_Site="none")
    assert (status, state["completed"]) == (200, ["replay"])


def test_a_deeply_nested_body_is_a_bad_request(demo: Demo) -> None:
    deep = b"[" * 2000 + b"]" * 2000
    assert demo.act("replay", deep) == (
        400,
        {"error": {"status": 400, "message": "the body is nested too deeply"}},
    )
    status, state = demo.request("GET", "/api/state")
    assert (status, state["completed"]) == (200, [])


def test_a_burst_of_500_connections_is_queued_not_dropped(demo: Demo) -> None:
    # With the server stopped, the kernel completes handshakes only while the listen
    # backlog has room; the rest of the SYNs are dropped and retried seconds later.
    host, port = demo.host.split(":")
    demo.process.send_signal(signal.SIGSTOP)
    connections: list[socket.socket] = []
    try:
        for _ in range(500):
            connection = socket.socket()
            connection.setblocking(False)
            connection.connect_ex((host, int(port)))
            connections.append(connection)
        pending = set(connections)
        deadline = time.monotonic() + 20  # a bound on waiting, not a speed target
        while pending and time.monotonic() < deadline:
            _, writable, _ = select.select([], list(pending), [], 1)
            pending -= set(writable)
        established = [
            c for c in connections if c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
        ]
        assert (len(pending), len(established)) == (0, 500)
    finally:
        for connection in connections:
            connection.close()
        demo.process.send_signal(signal.SIGCONT)
    status, _ = demo.request("GET", "/api/state")
    assert status == 200


def test_clients_that_disconnect_mid_headers_print_nothing(demo: Demo) -> None:
    # The audit's case: half a request's headers, then the client is gone; 50 times.
    host, port = demo.host.split(":")
    for _ in range(50):
        with socket.create_connection((host, int(port)), timeout=30) as connection:
            connection.sendall(f"GET / HTTP/1.1\r\nHost: {demo.host}\r\nAccept: te".encode())
    status, _ = demo.request("GET", "/api/state")
    assert status == 200  # still serving
    assert demo.stop() == 0
    assert demo.process.stderr is not None
    printed = demo.process.stderr.read()
    assert "Traceback" not in printed
    assert printed == ""


def test_the_server_binds_loopback_only(demo: Demo) -> None:
    assert demo.url.startswith("http://127.0.0.1:")
    status, _ = demo.request("GET", "/api/state")
    assert status == 200


def test_the_page_in_a_real_browser(demo: Demo, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    assert Path(CHROMIUM).exists(), (
        f"{CHROMIUM} is missing: install Debian's chromium (.ci/run does) to run the browser test"
    )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        page = browser.new_page(viewport={"width": 1100, "height": 1400})
        page.goto(demo.url)
        incident = page.locator('[data-result="incident"]')
        expect(incident).to_contain_text("Recorded decision: approved")
        buttons = {
            name: page.locator(f'button[data-action="{name}"]')
            for name in ("replay", "correct", "compare", "promote", "reset")
        }
        expect(incident).to_contain_text("1 provider call at capture time")
        expect(buttons["replay"]).to_be_enabled()
        for later in ("correct", "compare", "promote"):
            expect(buttons[later]).to_be_disabled()
        page.evaluate("act('compare')")  # out of order: the server refuses it
        expect(page.locator("#error")).to_contain_text("compare cannot run now")
        expect(buttons["replay"]).to_be_enabled()  # the state was read back and shown
        for later in ("correct", "compare", "promote"):
            expect(buttons[later]).to_be_disabled()

        buttons["replay"].click()
        expect(page.locator("#error")).to_be_hidden()
        expect(page.locator('[data-result="replay"]')).to_contain_text(
            "Replayed decision: approved"
        )
        expect(page.locator('[data-result="replay"]')).to_contain_text("0 provider calls")
        expect(buttons["compare"]).to_be_disabled()
        buttons["correct"].click()
        ask = page.locator("[data-ask]")
        answer = page.locator("#supply-value")
        supply = page.locator("button[data-supply]")
        expect(ask).to_be_visible()
        expect(ask).to_contain_text("called review.queue.add (occurrence 0)")
        expect(ask).to_contain_text("a call the recording never made")
        expect(page.locator('[data-result="correct"]')).to_contain_text(
            "The fork stopped at review.queue.add"
        )
        expect(answer).to_have_value("null")  # the recording never called the queue
        expect(buttons["correct"]).to_be_disabled()
        answer.fill("{not json")
        supply.click()
        expect(page.locator("#error")).to_contain_text("The answer is not valid JSON")
        answer.fill('{"ticket": "rv_ord_1042", "queue": "refunds"}')
        supply.click()
        expect(ask).to_contain_text("called notify.customer (occurrence 0)")
        expect(ask).to_contain_text("being reviewed")
        expect(answer).to_have_value('{\n  "sent": true,\n  "channel": "email"\n}')
        supply.click()
        expect(ask).to_be_hidden()
        correct = page.locator('[data-result="correct"]')
        expect(correct).to_contain_text("Corrected fork decision: manual_review")
        expect(correct).to_contain_text("supplied review.queue.add, notify.customer")
        expect(correct).to_contain_text(
            "Not called by the corrected run: billing.refund.create, notify.customer"
        )
        buttons["compare"].click()
        compare = page.locator('[data-result="compare"]')
        expect(compare).to_contain_text("First observable divergence")
        expect(compare).to_contain_text("openai.responses.create")
        expect(compare).to_contain_text("$.output.body.output[1].content[0].text")
        expect(compare).to_contain_text("not a claim about the root cause")
        expect(compare).to_contain_text("Missing from the corrected run: billing.refund.create.")
        expect(compare).to_contain_text("Added: review.queue.add (supplied).")
        expect(compare).to_contain_text(
            "Asked differently: notify.customer (supplied) at $.inputs.message."
        )
        buttons["promote"].click()
        promote = page.locator('[data-result="promote"]')
        expect(promote).to_contain_text("Promoted case refund_over_limit_needs_review")
        expect(promote).to_contain_text("verification passed")
        for name in ("replay", "correct", "compare", "promote"):
            expect(buttons[name]).to_be_disabled()
        page.screenshot(path=str(tmp_path / "incident-demo.png"), full_page=True)
        artifacts = os.environ.get("TOOLREPLAY_ARTIFACTS")  # a folder to keep it for people
        if artifacts:
            page.screenshot(path=str(Path(artifacts) / "incident-demo.png"), full_page=True)
        assert "sk-" not in page.content()

        buttons["reset"].click()
        expect(buttons["replay"]).to_be_enabled()
        expect(page.locator('[data-result="replay"]')).to_have_text("")
        expect(page.locator("#error")).to_be_hidden()
        browser.close()
    assert (tmp_path / "incident-demo.png").stat().st_size > 10_000


# --- a hostile trace in the page ----------------------------------------------------------


def hostile_incident(path: Path, edit: str) -> Path:
    """The bundled incident edited by hand, fixed up so that it reads as valid: the
    customer's notice answered with hostile text (it still replays, and the corrected run
    asks for that notice's answer, prefilled with it), or a hostile customer name (the
    prompt built from it no longer matches: the replay fails, naming it)."""
    from tests.support.hostile import INCIDENT, EditableTrace, hostile

    trace = EditableTrace.read(INCIDENT)
    if edit == "notice":
        trace.operations[4]["outcome"]["value"] = {
            "sent": True,
            "channel": hostile("notice-channel"),
            hostile("notice-key"): True,
        }
    else:
        trace.operations[0]["outcome"]["value"]["name"] = hostile("customer-name")
    return trace.write(path, "complete")


def launch(playwright: Any) -> Any:
    return playwright.chromium.launch(
        executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
    )


def shown_text(page: Any) -> str:
    """What a person reads: the page's text, and the answer box's value."""
    return page.evaluate(
        "document.body.innerText + '\\n' + document.getElementById('supply-value').value"
    )


def test_the_page_shows_a_hostile_trace_escaped_and_keeps_its_values(tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    from tests.support.hostile import CLIPBOARD, hostile, unsafe_characters

    incident = hostile_incident(tmp_path / "sent-to-us.trp", "notice")
    temporary = tmp_path / "server-tmp"
    temporary.mkdir()
    demo = Demo(temporary, "--incident", str(incident))
    try:
        status, state = demo.request("GET", "/api/state")  # valid JSON, the values intact
        assert status == 200
        assert state["results"]["incident"]["provider_calls"] is None
        with sync_playwright() as playwright:
            browser = launch(playwright)
            page = browser.new_page(viewport={"width": 1100, "height": 1400})
            page.goto(demo.url)
            expect(page.locator('[data-result="incident"]')).to_contain_text(
                "loaded from a trace file"
            )
            page.locator('button[data-action="replay"]').click()
            page.locator('button[data-action="correct"]').click()
            answer = page.locator("#supply-value")
            expect(page.locator("[data-ask]")).to_contain_text("review.queue.add")
            answer.fill('{"ticket": "rv_ord_1042", "queue": "refunds"}')
            page.locator("button[data-supply]").click()
            # The notice's answer starts from the recorded one: the hostile text, escaped.
            expect(page.locator("[data-ask]")).to_contain_text("notify.customer")
            value = answer.input_value()
            assert (
                f'"<notice-channel>\\u001b[2J\\u001b]0;pwned\\u0007\\u001b]52;c;{CLIPBOARD}'
                in value
            )
            assert "\\u202e" in value
            assert unsafe_characters(value.replace("\n", "")) == []
            assert unsafe_characters(shown_text(page)) == []
            # Supplied as it stands, the escapes are the same value: the fork completes.
            page.locator("button[data-supply]").click()
            expect(page.locator('[data-result="correct"]')).to_contain_text(
                "Corrected fork decision: manual_review"
            )
            browser.close()
        (branch,) = temporary.glob("toolreplay-demo-*/scenario/corrected.trp")
        operations = toolreplay.read_trace(branch).operations
        notice = [op.outcome for op in operations if op.effect == "notify.customer"][-1]
        assert notice == toolreplay.Returned(
            {"sent": True, "channel": hostile("notice-channel"), hostile("notice-key"): True}
        )
    finally:
        demo.stop()


def test_an_error_quoting_a_hostile_trace_is_shown_escaped(tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    from tests.support.hostile import unsafe_characters

    incident = hostile_incident(tmp_path / "sent-to-us.trp", "customer")
    temporary = tmp_path / "server-tmp"
    temporary.mkdir()
    demo = Demo(temporary, "--incident", str(incident))
    try:
        status, error = demo.act("reset")  # its replay misses: the prompt holds the name
        assert status == 500
        assert "<customer-name>" in error["error"]["message"]
        with sync_playwright() as playwright:
            browser = launch(playwright)
            page = browser.new_page(viewport={"width": 1100, "height": 1400})
            page.goto(demo.url)
            expect(page.locator('[data-result="incident"]')).to_contain_text(
                "No incident is recorded"
            )
            page.locator('button[data-action="reset"]').click()
            box = page.locator("#error")
            expect(box).to_contain_text("<customer-name>\\u001b[2J\\u001b]0;pwned\\u0007")
            assert box.locator(".escaped").count() > 0  # each escape marked
            assert unsafe_characters(shown_text(page)) == []
            browser.close()
    finally:
        demo.stop()
