"""Credentials never reach anything Tool Replay writes.

Canary values go into every place a credential can live: the API key (the
`Authorization` header), Azure's `api-key` header, `OpenAI-Organization`,
`OpenAI-Project`, a cookie, headers the application adds (client-wide and per
call), a query parameter named like a key, and the base URL's user and
password. They go through every kind of call (JSON, a file upload, a list, a
retrieve, streams; sync and async; OpenAI and Azure) while recording, then
replay, fork, diff, promote, verify and `toolreplay show`. Every byte written
(all files under the work folder, stdout and stderr) is scanned for them.
"""

from __future__ import annotations

import asyncio
import base64
import subprocess
import sys
from pathlib import Path
from typing import Any

import openai
import pytest

import toolreplay
from examples.local_openai import HTTP, LocalOpenAI, refusing
from toolreplay.adapters.openai import instrument

CANARIES = {
    "api_key": "sk-CANARY-apikey-7f3a",
    "azure_key": "CANARY-azurekey-1b9c",
    "organization": "org-CANARY-org-55d2",
    "project": "proj_CANARY-project-a1e0",
    "header": "CANARY-header-0d4e",
    "per_call": "CANARY-percall-9e81",
    "cookie": "CANARY-cookie-3c77",
    "query": "CANARY-query-b214",
    "user": "CANARY-user-6f02",
    "password": "CANARY-password-d3a9",
}
BASE_URL = "https://gateway.example.test/v1"
# In the URL, a user and password become HTTP basic auth, which replaces the bearer key:
# the Azure client (whose key is its own header) carries them.
AZURE_ENDPOINT = f"https://{CANARIES['user']}:{CANARIES['password']}@r.openai.azure.com"
ROOT = Path(__file__).resolve().parents[2]


def _forms(value: str) -> list[bytes]:
    raw = value.encode()
    return [raw, base64.b64encode(raw), raw.hex().encode()]


FORBIDDEN = [form for value in CANARIES.values() for form in _forms(value)]
FORBIDDEN += _forms(f"{CANARIES['user']}:{CANARIES['password']}")


def options(handler: Any, *, use_async: bool = False) -> dict[str, Any]:
    library_client = HTTP.AsyncClient if use_async else HTTP.Client
    return {
        "api_key": CANARIES["api_key"],
        "organization": CANARIES["organization"],
        "project": CANARIES["project"],
        "base_url": BASE_URL,
        "default_headers": {
            "X-Tenant-Secret": CANARIES["header"],
            "Cookie": f"session={CANARIES['cookie']}",
        },
        "default_query": {"api_key": CANARIES["query"]},
        "http_client": library_client(transport=HTTP.MockTransport(handler)),
        "max_retries": 0,
    }


def sync_calls(client: Any) -> list[Any]:
    per_call = {"extra_headers": {"X-Per-Call": CANARIES["per_call"]}}
    out: list[Any] = [
        client.responses.create(model="gpt-5-mini", input="Refund?", **per_call),
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], **per_call
        ),
        client.embeddings.create(model="text-embedding-3-small", input="hi", **per_call),
        [model.id for model in client.models.list(**per_call)],
        client.responses.retrieve("resp_0c4e6b1f2a9d7e3b", **per_call),
        list(client.responses.create(model="gpt-5-mini", input="Hi", stream=True, **per_call)),
        list(
            client.chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
                **per_call,
            )
        ),
    ]
    try:  # a file upload: the local API answers 404, recorded like any response
        client.files.create(file=("notes.txt", b"hello"), purpose="assistants", **per_call)
    except openai.NotFoundError as error:
        out.append(error.status_code)
    return out


async def async_calls(client: Any) -> list[Any]:
    stream = await client.responses.create(model="gpt-5-mini", input="Hi", stream=True)
    return [
        await client.responses.create(
            model="gpt-5-mini", input="Refund?", extra_headers={"X-Per-Call": CANARIES["per_call"]}
        ),
        [event async for event in stream],
    ]


def azure_calls(client: Any) -> list[Any]:
    return [
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "hi"}],
            extra_headers={"X-Per-Call": CANARIES["per_call"]},
        )
    ]


def azure_client(handler: Any) -> Any:
    settings: dict[str, Any] = {
        "api_key": CANARIES["azure_key"],
        "api_version": "2025-04-01-preview",
        "azure_endpoint": AZURE_ENDPOINT,
        "azure_deployment": "refunds",
        "organization": CANARIES["organization"],
        "project": CANARIES["project"],
        "default_headers": {"X-Tenant-Secret": CANARIES["header"]},
        "http_client": HTTP.Client(transport=HTTP.MockTransport(handler)),
        "max_retries": 0,
    }
    return openai.AzureOpenAI(**settings)


def run_everything(folder: Path) -> None:
    api = LocalOpenAI("approve")
    seen: list[Any] = []

    def live(request: Any) -> Any:
        seen.append(request)
        return api(request)

    traces = [folder / name for name in ("sync.trp", "async.trp", "azure.trp")]
    with toolreplay.record(traces[0]):
        recorded = sync_calls(instrument(openai.OpenAI(**options(live))))
    with toolreplay.record(traces[1]):
        asyncio.run(async_calls(instrument(openai.AsyncOpenAI(**options(live, use_async=True)))))
    with toolreplay.record(traces[2]):
        azure_calls(instrument(azure_client(live)))
    # The canaries were really sent: the transport saw every one of them.
    sent = b"".join(
        b"".join(name + b": " + value for name, value in request.headers.raw)
        + str(request.url).encode()
        for request in seen
    )
    for name in ("api_key", "azure_key", "organization", "project", "header", "per_call", "cookie"):
        assert CANARIES[name].encode() in sent, name
    assert base64.b64encode(f"{CANARIES['user']}:{CANARIES['password']}".encode()) in sent

    refused: list[Any] = []
    with toolreplay.replay(traces[0]):
        assert sync_calls(instrument(openai.OpenAI(**options(refusing(refused))))) == recorded
    with toolreplay.replay(traces[1]):
        asyncio.run(
            async_calls(
                instrument(openai.AsyncOpenAI(**options(refusing(refused), use_async=True)))
            )
        )
    with toolreplay.replay(traces[2]):
        azure_calls(instrument(azure_client(refusing(refused))))
    assert refused == []

    operation = toolreplay.read_trace(traces[0]).operations[0]
    assert isinstance(operation.outcome, toolreplay.Returned)
    patch = toolreplay.replace_output(
        effect=operation.effect, inputs=operation.inputs, value=operation.outcome.value
    )
    branch = folder / "branch.trp"
    with toolreplay.fork(traces[0], branch, patches=[patch]):
        sync_calls(instrument(openai.OpenAI(**options(refusing(refused)))))
    print(toolreplay.diff(traces[0], branch).render_text())
    case = toolreplay.promote(
        traces[0],
        folder / "cases" / "credentials",
        name="credentials",
        runner="tests.adapters.test_credentials:case_runner",
        expected=len(recorded),
    )
    toolreplay.verify_case(case.directory)
    shown = subprocess.run(
        [sys.executable, "-m", "toolreplay", "show", str(traces[0]), "--format", "json"],
        capture_output=True,
        check=True,
        cwd=ROOT,
    )
    sys.stdout.buffer.write(shown.stdout)
    sys.stderr.buffer.write(shown.stderr)


def case_runner() -> int:
    """The promoted case's runner: the same calls, with a transport that refuses."""
    return len(sync_calls(instrument(openai.OpenAI(**options(refusing())))))


def test_no_credential_reaches_anything_written(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    run_everything(tmp_path)
    captured = capfdbinary.readouterr()
    written = {"stdout": captured.out, "stderr": captured.err}
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert len(files) >= 5
    written.update({str(path.relative_to(tmp_path)): path.read_bytes() for path in files})
    found = {
        where: [form.decode() for form in FORBIDDEN if form in content]
        for where, content in written.items()
    }
    assert {where: forms for where, forms in found.items() if forms} == {}
    assert b"CANARY" not in b"".join(written.values())
    # The query parameter named like a key is recorded as present, never its value.
    trace = toolreplay.read_trace(tmp_path / "sync.trp")
    assert trace.operations[0].inputs["query"] == {"api_key": "<redacted>"}
