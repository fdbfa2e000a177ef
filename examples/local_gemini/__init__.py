"""A local stand-in for the Gemini API, for real `google-genai` clients: the handler of an
`httpx` `MockTransport` (the example, the benchmark), or served over loopback by
`tests/adapters/http_api.served` (the tests). `generateContent` and
`streamGenerateContent?alt=sse` (text, function calls, thought summaries), `countTokens`,
`embedContent`/`batchEmbedContents`, models (list, get), ephemeral tokens
(`auth_tokens`, answered with `AUTH_TOKEN`), and an error of any status on request.

It answers as the API does: bodies in the API's camelCase shape, a stream as unnamed
server-sent events (`data: {...}`, each a whole `GenerateContentResponse` holding the
next piece), errors as `{"error": {"code", "message", "status", "details"}}`, and an
`x-goog-*` header that names the account and must not be recorded. It checks what a
real client must send: its key (`x-goog-api-key`), or a bearer token. `served` serves it
under `/v1`, which the Gemini paths do not use: give the SDK the URL without it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

__all__ = [
    "API_KEY",
    "AUTH_TOKEN",
    "MODEL",
    "MODEL_VERSION",
    "PROJECT_HEADER",
    "AgentScript",
    "LocalGemini",
    "chunks",
    "final_answer",
]

API_KEY = "AIzaSyCANARY-gemini-key-0000000000000"  # the shape of a Google API key
AUTH_TOKEN = "auth_tokens/CANARY-ephemeral-token-5f1e9a"  # a credential, never recorded
MODEL = "gemini-2.5-flash"
MODEL_VERSION = "gemini-2.5-flash-preview-09-2025"
PROJECT_HEADER = "x-goog-project-number-CANARY-7731"  # an account detail, never recorded
THOUGHT = "The user gives the order number, so I can refund it directly."
SIGNATURE = "CiQB0e2Kb3Qx7vJmZl8tQ2Z0aG91Z2h0LXNpZ25hdHVyZQ=="
STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_ACTION = re.compile(r"^/(?:v\d\w*/)?models/(?P<model>[^/:]+):(?P<action>\w+)$")
_MODEL = re.compile(r"^/(?:v\d\w*/)?models/(?P<model>[^/:]+)$")
_MODELS = re.compile(r"^/(?:v\d\w*/)?models$")
_AUTH_TOKENS = re.compile(r"^/(?:v\d\w*/)?auth_tokens$")


def _last_parts(request: dict[str, Any]) -> list[dict[str, Any]]:
    contents = request.get("contents") or [{}]
    return list(contents[-1].get("parts") or [])


@dataclass(frozen=True)
class AgentScript:
    """What the model does for an agent framework: call the first declared function with
    `args` (no text before the call, as an agent's tool turn), then, once the request
    holds the function's responses, answer with `answer(responses)` (each response the
    `functionResponse` object the client sent)."""

    args: dict[str, Any]
    answer: Callable[[list[dict[str, Any]]], str]


def final_answer(
    request: dict[str, Any], script: AgentScript | None = None
) -> list[dict[str, Any]]:
    """The parts the model answers with: a thought summary when thoughts are asked for,
    then a function call when functions are offered and the user just asked, else text
    (a `script` gives the call's arguments and the text)."""
    parts: list[dict[str, Any]] = []
    thinking = (request.get("generationConfig") or {}).get("thinkingConfig") or {}
    # Proto JSON: the API reads a field by its camelCase or its snake_case name.
    if thinking.get("includeThoughts") or thinking.get("include_thoughts"):
        parts.append({"text": THOUGHT, "thought": True})
    answered = any("functionResponse" in part for part in _last_parts(request))
    declared = [
        declaration["name"]
        for tool in request.get("tools") or []
        for declaration in tool.get("functionDeclarations") or []
    ]
    if declared and not answered:
        if script is None:
            parts.append({"text": "Let me refund that order."})
        args = script.args if script else {"order_id": 8812, "reason": "lost in transit"}
        parts.append(
            {"functionCall": {"name": declared[0], "args": args}, "thoughtSignature": SIGNATURE}
        )
    elif script is not None:
        responses = [p["functionResponse"] for p in _last_parts(request) if "functionResponse" in p]
        parts.append({"text": script.answer(responses)})
    else:
        parts.append({"text": "Order 8812 was refunded in full. Anything else?"})
    return parts


def _usage(parts: list[dict[str, Any]]) -> dict[str, Any]:
    thoughts = sum(len(str(p.get("text", ""))) // 4 for p in parts if p.get("thought"))
    answer = sum(len(json.dumps(p)) // 4 for p in parts if not p.get("thought"))
    usage: dict[str, Any] = {
        "promptTokenCount": 31,
        "candidatesTokenCount": answer,
        "totalTokenCount": 31 + answer + thoughts,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 31}],
    }
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    return usage


def response(
    request: dict[str, Any], number: int, script: AgentScript | None = None
) -> dict[str, Any]:
    """A `GenerateContentResponse` for `request`, as the API sends it."""
    parts = final_answer(request, script)
    return {
        "candidates": [
            {
                "content": {"parts": parts, "role": "model"},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": _usage(parts),
        "modelVersion": MODEL_VERSION,
        "responseId": f"mAitaPXnJ8WfnvgP{number:04d}",
    }


def chunks(final: dict[str, Any]) -> list[dict[str, Any]]:
    """The chunks the API streams for `final`: each text in pieces of up to 9 characters,
    each function call whole, the finish reason and full usage on the last chunk."""
    head = {key: final[key] for key in ("modelVersion", "responseId")}
    candidate = final["candidates"][0]
    pieces: list[dict[str, Any]] = []
    for part in candidate["content"]["parts"]:
        if "text" in part:
            texts = re.findall(r".{1,9}", part["text"], flags=re.S)
            pieces += [{**part, "text": text} for text in texts]
        else:
            pieces.append(part)
    usage = final["usageMetadata"]
    streamed: list[dict[str, Any]] = []
    for index, piece in enumerate(pieces):
        last = index == len(pieces) - 1
        streamed_candidate: dict[str, Any] = {"content": {"parts": [piece], "role": "model"}}
        if last:
            streamed_candidate["finishReason"] = candidate["finishReason"]
        streamed_candidate["index"] = 0
        running = usage if last else {"promptTokenCount": 31, "totalTokenCount": 31}
        streamed.append({"candidates": [streamed_candidate], "usageMetadata": running, **head})
    return streamed


def _sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"data: {json.dumps(event)}\r\n\r\n" for event in events).encode()


MODEL_INFO = {
    "name": f"models/{MODEL}",
    "version": "001",
    "displayName": "Gemini 2.5 Flash",
    "description": "Stable version of Gemini 2.5 Flash.",
    "inputTokenLimit": 1048576,
    "outputTokenLimit": 65536,
    "supportedGenerationMethods": ["generateContent", "countTokens", "batchGenerateContent"],
    "temperature": 1,
    "topP": 0.95,
    "topK": 64,
    "maxTemperature": 2,
    "thinking": True,
}


class LocalGemini:
    """The Gemini API on loopback. `fail` lists statuses to answer the next generate or
    stream requests with (an error body of the API's shape); `requests` are those
    received. `script` makes the model an agent's: one function call, then an answer."""

    def __init__(self, script: AgentScript | None = None) -> None:
        self.requests: list[Any] = []
        self.fail: list[int] = []
        self.script = script

    def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        key = request.headers.get("x-goog-api-key") or request.headers.get("authorization", "")
        # An upload's bytes go to the URL its start answered, which names the session.
        assert key or b"upload_id=" in request.url.query, "the SDK sends its key or a token"
        number = len(self.requests)
        headers = {PROJECT_HEADER.split("-CANARY")[0]: PROJECT_HEADER, "server-timing": "gfet4t7"}
        path = request.url.path.removeprefix("/v1beta1").removeprefix("/v1beta")
        path = re.sub(r"^/projects/[^/]+/locations/[^/]+/publishers/google", "", path)
        action = _ACTION.match(path)
        if action and self.fail and action["action"].lower().endswith("generatecontent"):
            status = self.fail.pop(0)
            error = {
                "error": {
                    "code": status,
                    "message": f"Request failed with status {status}.",
                    "status": STATUSES.get(status, "UNKNOWN"),
                    "details": [
                        {
                            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": "API_KEY_INVALID" if status == 400 else "RATE_LIMIT",
                            "domain": "googleapis.com",
                        }
                    ],
                }
            }
            return httpx.Response(status, json=error, headers=headers)
        if action is not None:
            return self._action(request, action["action"], number, headers)
        if path == "/upload/v1beta/files" or path == "/upload/v1/files":
            return self._upload(request, headers)
        if _AUTH_TOKENS.match(path) and request.method == "POST":
            return httpx.Response(200, json={"name": AUTH_TOKEN}, headers=headers)
        if _MODELS.match(path):
            return httpx.Response(200, json={"models": [MODEL_INFO]}, headers=headers)
        if _MODEL.match(path):
            return httpx.Response(200, json=MODEL_INFO, headers=headers)
        error = {"error": {"code": 404, "message": f"{path} not found", "status": "NOT_FOUND"}}
        return httpx.Response(404, json=error, headers=headers)

    def _upload(self, request: Any, headers: dict[str, str]) -> Any:
        """The resumable upload protocol: `start` answers the URL to send the bytes to,
        `upload, finalize` the file."""
        command = request.headers.get("x-goog-upload-command", "")
        base = f"{request.url.scheme}://{request.url.host}:{request.url.port}"
        if command == "start":
            url = f"{base}{request.url.path}?upload_id=ADPycdu3Zqf1oSvC"
            started = {**headers, "x-goog-upload-url": url, "x-goog-upload-status": "active"}
            return httpx.Response(200, content=b"", headers=started)
        file = {
            "name": "files/k3x9q2m1z8ab",
            "displayName": "notes",
            "mimeType": "text/plain",
            "sizeBytes": str(len(request.content)),
            "createTime": "2026-01-05T10:00:00.000000Z",
            "updateTime": "2026-01-05T10:00:00.000000Z",
            "expirationTime": "2026-01-07T10:00:00.000000Z",
            "sha256Hash": "LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=",
            "uri": f"{base}/v1beta/files/k3x9q2m1z8ab",
            "state": "ACTIVE",
            "source": "UPLOADED",
        }
        final = {**headers, "x-goog-upload-status": "final"}
        return httpx.Response(200, json={"file": file}, headers=final)

    def _action(self, request: Any, action: str, number: int, headers: dict[str, str]) -> Any:
        sent = json.loads(request.content or b"{}")
        if action == "generateContent":
            return httpx.Response(200, json=response(sent, number, self.script), headers=headers)
        if action == "streamGenerateContent":
            return httpx.Response(
                200,
                content=_sse(chunks(response(sent, number, self.script))),
                headers={**headers, "content-type": "text/event-stream"},
            )
        if action == "countTokens":
            counted = {
                "totalTokens": 42,
                "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 42}],
            }
            return httpx.Response(200, json=counted, headers=headers)
        if action in ("embedContent", "batchEmbedContents"):
            given = sent.get("requests") or [sent]
            vectors = [{"values": [0.0125, -0.0213, 0.0087, 0.0441]} for _ in given]
            body = {"embeddings": vectors} if "requests" in sent else {"embedding": vectors[0]}
            return httpx.Response(200, json=body, headers=headers)
        error = {"error": {"code": 404, "message": f"{action} not found", "status": "NOT_FOUND"}}
        return httpx.Response(404, json=error, headers=headers)
