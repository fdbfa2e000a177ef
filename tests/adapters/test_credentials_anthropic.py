"""No Anthropic credential reaches anything Tool Replay writes or prints.

Distinct canaries go wherever an Anthropic client can carry a credential: the API key
(sent as a bearer token), an `auth_token` (`Authorization`), an `x-api-key` header,
`anthropic-*` headers shaped like credentials, headers the application adds (client-wide,
and per call), a cookie, a query parameter named like a key, and the base URL's user and
password (HTTP basic auth). They go through JSON and streamed Messages calls, token
counting, models and a beta resource, sync and async, recorded over real HTTP on loopback.
Then replay, a fork and a diff in process, and the command line's `show`, `find`,
`fork`, `diff` and `promote` in child processes. Every byte written (every file under the
work folder) and printed (stdout and stderr, ours and the children's) is searched for
each canary, raw, base64 and hex.

A query in the base URL itself is left out: the SDK appends each request's path after
it (`/?sig=x%2Fv1%2Fmessages`), so no application can use one.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

import toolreplay
from examples.local_anthropic import API_KEY, MODEL, LocalAnthropic, refusing
from tests.adapters.http_api import served
from toolreplay.adapters.anthropic import edit, instrument

ROOT = Path(__file__).resolve().parents[2]
CANARIES = {
    "api_key": API_KEY,  # the local API checks it: an Anthropic key's shape
    "auth_token": "CANARY-authtoken-5b1e",
    "x_api_key": "sk-ant-api03-CANARY-xapikey-77d0",
    "admin_key": "sk-ant-admin01-CANARY-admin-c3a4",
    "oauth": "CANARY-oauth-e91f",
    "tenant": "CANARY-tenant-2d6b",
    "per_call": "CANARY-percall-40ac",
    "cookie": "CANARY-cookie-8f15",
    "query": "CANARY-query-6a3c",
    "user": "CANARY-user-1c9d",
    "password": "CANARY-password-0e7b",
}
ASKED: Any = [{"role": "user", "content": "Refund order 8812, it was lost."}]
TOOLS: Any = [{"name": "issue_refund", "input_schema": {"type": "object"}}]


def _forms(value: str) -> list[bytes]:
    raw = value.encode()
    return [raw, base64.b64encode(raw), raw.hex().encode()]


FORBIDDEN = [form for value in CANARIES.values() for form in _forms(value)]
FORBIDDEN += _forms(f"{CANARIES['user']}:{CANARIES['password']}")


def options(kind: str, base_url: str) -> dict[str, Any]:
    """A client's settings: `key` holds the API key (a bearer token), an `x-api-key`,
    the `anthropic-*` credential headers, the application's own; `token` an auth token."""
    headers = {
        "anthropic-admin-api-key": CANARIES["admin_key"],
        "anthropic-oauth-token": CANARIES["oauth"],
        "X-Tenant-Secret": CANARIES["tenant"],
        "Cookie": f"session={CANARIES['cookie']}",
    }
    settings: dict[str, Any] = {
        "base_url": base_url,
        "default_query": {"api_key": CANARIES["query"]},
        "max_retries": 0,
    }
    if kind == "key":
        settings.update(
            api_key=CANARIES["api_key"],
            default_headers={**headers, "x-api-key": CANARIES["x_api_key"]},
        )
    else:  # the local API checks the key, given here as x-api-key
        settings.update(
            auth_token=CANARIES["auth_token"],
            default_headers={**headers, "x-api-key": CANARIES["api_key"]},
        )
    return settings


def sync_calls(client: Any) -> list[Any]:
    per_call = {"extra_headers": {"X-Per-Call-Auth": CANARIES["per_call"]}}
    created = client.messages.create(
        model=MODEL, max_tokens=64, messages=ASKED, tools=TOOLS, **per_call
    )
    with client.messages.stream(model=MODEL, max_tokens=64, messages=ASKED, **per_call) as stream:
        streamed = stream.get_final_message()
    return [
        created.to_dict(),
        streamed.to_dict(),
        client.messages.count_tokens(model=MODEL, messages=ASKED, **per_call).input_tokens,
        [model.id for model in client.models.list(**per_call)],
        client.beta.messages.create(
            model=MODEL, max_tokens=64, messages=ASKED, betas=["x-2025-01-01"], **per_call
        ).to_dict(),
    ]


async def async_calls(client: Any) -> list[Any]:
    created = await client.messages.create(
        model=MODEL, max_tokens=64, messages=ASKED, extra_headers={"X-Per-Call-Auth": "x"}
    )
    async with client.messages.stream(model=MODEL, max_tokens=64, messages=ASKED) as stream:
        streamed = await stream.get_final_message()
    return [created.to_dict(), streamed.to_dict()]


def userinfo_calls(client: Any) -> list[Any]:
    return [client.models.retrieve("claude-sonnet-4-6").id]


def _model(request: Any) -> Any:
    body = {"type": "model", "id": "claude-sonnet-4-6", "display_name": "Claude",
            "created_at": "2025-09-29T00:00:00Z"}  # fmt: skip
    return httpx2.Response(200, json=body, headers={"request-id": "req_1"})


def key_client(base_url: str | None = None) -> Any:
    """The client with the key; with no base URL, one whose transport refuses all."""
    if base_url is not None:
        return instrument(anthropic.Anthropic(**options("key", base_url)))
    http = httpx2.Client(transport=httpx2.MockTransport(refusing()))
    return instrument(anthropic.Anthropic(**options("key", "http://127.0.0.1:9"), http_client=http))


def case_runner() -> int:
    """The runner of the command line's fork and promote: the calls, sending nothing."""
    return len(sync_calls(key_client()))


def record_everything(folder: Path) -> list[Path]:
    api = LocalAnthropic()
    traces = [folder / f"{name}.trp" for name in ("key", "token", "async", "userinfo")]
    with served(api) as url:
        base = url.removesuffix("/v1")
        with toolreplay.record(traces[0]):
            recorded = sync_calls(key_client(base))
        with toolreplay.record(traces[1]):
            sync_calls(instrument(anthropic.Anthropic(**options("token", base))))
        with toolreplay.record(traces[2]):
            asynchronous = instrument(anthropic.AsyncAnthropic(**options("key", base)))
            asyncio.run(async_calls(asynchronous))
    with served(_model) as url:
        address = url.removesuffix("/v1").replace("http://", "")
        userinfo = f"http://{CANARIES['user']}:{CANARIES['password']}@{address}"
        with toolreplay.record(traces[3]):
            userinfo_calls(instrument(anthropic.Anthropic(**options("key", userinfo))))
    sent = b"".join(
        b"".join(name + b": " + value for name, value in request.headers.raw)
        + str(request.url).encode()
        for request in api.requests
    )
    # Every canary was really sent (the user and password in the other server's header).
    for name in CANARIES.keys() - {"user", "password"}:
        assert CANARIES[name].encode() in sent, name

    refused: list[Any] = []
    http = httpx2.Client(transport=httpx2.MockTransport(refusing(refused)))
    settings = {**options("key", "http://127.0.0.1:9"), "http_client": http}
    with toolreplay.replay(traces[0]):
        replayed = sync_calls(instrument(anthropic.Anthropic(**settings)))
    assert replayed == recorded
    assert refused == []
    branch = folder / "branch.trp"
    patch = toolreplay.replace_output(at=0, value=edit({"$.content[0].text": "Held."}))
    with toolreplay.fork(traces[0], branch, patches=[patch]):
        assert sync_calls(key_client())[0]["content"][0]["text"] == "Held."
    print(toolreplay.diff(traces[0], branch).render_text())
    return traces


def command(*arguments: str) -> subprocess.CompletedProcess[bytes]:
    env = {key: value for key, value in os.environ.items() if "API_KEY" not in key}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", *arguments],
        capture_output=True,
        cwd=ROOT,
        env=env,
        check=False,
        timeout=300,
    )


def test_no_anthropic_credential_reaches_anything_written_or_printed(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    traces = record_everything(tmp_path)
    patches = tmp_path / "patches.json"
    toolreplay.write_patches(
        patches, [toolreplay.replace_output(at=1, value=edit({"$.content[0].text": "No."}))]
    )
    runner = "tests.adapters.test_credentials_anthropic:case_runner"
    branch, case = tmp_path / "cli-branch.trp", tmp_path / "cases" / "claude"
    runs = {
        "fork": command(
            "fork", str(traces[0]), "-p", str(patches), "-o", str(branch), "-r", runner
        ),
        "diff": command("diff", str(traces[0]), str(branch)),
        "diff json": command("diff", str(traces[0]), str(branch), "-f", "json"),
        "promote": command(
            "promote",
            str(branch),
            "-o",
            str(case),
            "-n",
            "claude",
            "-r",
            runner,
            "--expect-json",
            json.dumps(5),
        ),
        "find": command("find", str(tmp_path), "--effect", "anthropic.messages.create"),
        "find json": command("find", str(tmp_path), "-f", "json"),
    }
    for trace in traces:
        runs[f"show {trace.name}"] = command("show", str(trace))
        runs[f"show json {trace.name}"] = command("show", str(trace), "-f", "json")
    failed = {name: run.stderr.decode()[-2000:] for name, run in runs.items() if run.returncode}
    assert failed == {}
    assert b"anthropic.messages.create" in runs["show key.trp"].stdout
    assert b"key.trp" in runs["find"].stdout
    assert (case / "case.json").exists()

    captured = capfdbinary.readouterr()
    written = {"stdout": captured.out, "stderr": captured.err}
    for name, run in runs.items():
        written[f"{name}: stdout"], written[f"{name}: stderr"] = run.stdout, run.stderr
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert len(files) >= 8
    written.update({str(path.relative_to(tmp_path)): path.read_bytes() for path in files})
    found = {
        where: [form.decode() for form in FORBIDDEN if form in content]
        for where, content in written.items()
    }
    assert {where: forms for where, forms in found.items() if forms} == {}
    assert b"CANARY" not in b"".join(written.values())
    # The key-named query parameter is recorded as present, never its value.
    operation = toolreplay.read_trace(traces[0]).operations[0]
    assert operation.inputs["query"] == {"api_key": "<redacted>"}
