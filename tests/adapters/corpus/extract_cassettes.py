"""Extract request/response pairs of one provider's API from other projects' VCR cassettes.

Usage, from the project root::

    uv run python tests/adapters/corpus/extract_cassettes.py PROVIDER CLONE_ROOT [--all OUT_DIR]

PROVIDER is `openai`, `anthropic` or `gemini` (PROVIDERS below). CLONE_ROOT/OWNER+NAME
is a git clone (a bare mirror works) of each repository of the provider's sources;
cassettes are read at its HEAD commit. Every interaction with the provider's host on an
endpoint its corpus test knows is a candidate; pairs are grouped by what they exercise
(endpoint, status, JSON or stream, the kinds of items, blocks or parts the answer holds)
and at most `per_kind` of each kind are kept, mixing sources. Each cassette contributing
a pair becomes one JSON file in the provider's folder here (`openai/`, `anthropic/`,
`gemini/`) holding its origin (repository, path, commit, licence) and its pairs, and the
provider's section of the README in this folder is rewritten to list them. Only what
the corpus test needs is kept: method, path, query and JSON body of the request (and
the request headers that choose what the API does, such as `anthropic-beta`); status,
content type and JSON body (or the server-sent events as text) of the response. Every
other header is dropped, a query parameter named like a credential (Gemini's `key=`)
too, and long base64-like strings (images, audio, encrypted reasoning, thought
signatures) are cut to a marked prefix, so nothing secret and nothing large is copied.

With `--all OUT_DIR`, every candidate pair (no selection, no size limit) is written to
OUT_DIR/PROVIDER instead, in the same format and without a README, so that the corpus
test can be run over all of them (`TOOLREPLAY_CORPUS_DIR=OUT_DIR`) before choosing what
to keep.
"""

from __future__ import annotations

import base64
import contextlib
import email.parser
import email.policy
import gzip
import hashlib
import json
import re
import subprocess
import sys
import textwrap
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import yaml

from toolreplay.adapters.capture.exchange import is_secret_query_name

CORPUS_DIR = Path(__file__).parent
ID = r"[^/]+"
MAX_PAIR_CHARS = 48_000
LONG_STRING = 256
KEPT_PREFIX = 24
BASE64ISH = re.compile(r"^(data:[\w/+.-]+;base64,)?[A-Za-z0-9+/=_-]+$")
EMBEDDING_KEEP = 8
# Bytes an SDK decodes from base64 (Gemini's thought signatures and inline data): cut to
# a prefix that is still valid base64, with no mark.
DECODED_BASE64_KEYS = frozenset({"thoughtSignature", "thought_signature", "data"})
EMBEDDING_BASE64_KEEP = 32
BINARY_KEEP = 1024
LONG_TEXT = 4000
TEXT_PREFIX = 200


def trim(value: Any, key: str = "") -> Any:
    """Cut long base64-like strings and long embedding vectors, recursively."""
    if key == "embedding" and isinstance(value, str):
        # Still valid base64 (six float32 values): the SDK may decode it.
        return value[:EMBEDDING_BASE64_KEEP]
    if isinstance(value, str):
        if len(value) > LONG_STRING and BASE64ISH.match(value.replace("\n", "")):
            if key in DECODED_BASE64_KEYS and not value.startswith("data:"):
                return value[:KEPT_PREFIX]  # whole 4-character groups: still base64
            return f"{value[:KEPT_PREFIX]}...[{len(value)} chars trimmed]"
        return value
    if isinstance(value, list):
        items: list[Any] = value
        if len(items) > EMBEDDING_KEEP and all(isinstance(x, float) for x in items):
            return items[:EMBEDDING_KEEP]
        return [trim(x) for x in items]
    if isinstance(value, dict):
        mapping: dict[str, Any] = value
        return {k: trim(v, k) for k, v in mapping.items()}
    return value


def cut_long_texts(value: Any) -> Any:
    """A request's texts longer than LONG_TEXT cut to a marked prefix, recursively: a
    long document or context in a prompt says nothing about how the answer is parsed,
    and would keep a pair with a small answer out of the corpus by its size."""
    if isinstance(value, str) and len(value) > LONG_TEXT:
        return f"{value[:TEXT_PREFIX]}...[{len(value)} chars cut]"
    if isinstance(value, list):
        return [cut_long_texts(x) for x in value]
    if isinstance(value, dict):
        return {k: cut_long_texts(v) for k, v in value.items()}
    return value


def header(headers: dict[str, Any] | None, name: str) -> str | None:
    for key, values in (headers or {}).items():
        if key.lower() == name:
            return str(values[0]) if isinstance(values, list) and values else str(values)
    return None


def body_bytes(raw: Any) -> bytes | None:
    if raw is None:
        return None
    if isinstance(raw, dict):
        raw = raw.get("string")
    if raw is None:
        return None
    return raw if isinstance(raw, bytes) else str(raw).encode()


def decode(data: bytes, encoding: str | None) -> bytes | None:
    if not encoding or encoding == "identity":
        return data
    if encoding == "gzip":
        try:
            return gzip.decompress(data)
        except OSError:
            return data  # already decompressed by the recorder
    if encoding == "deflate":
        return zlib.decompress(data)
    return None  # br, zstd: not decodable without extra packages; skipped


def sse_text(text: str) -> str:
    """The event stream with every data line's JSON trimmed and compacted."""
    lines: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.startswith("data: ") and line[6:].strip() not in ("", "[DONE]"):
            with contextlib.suppress(json.JSONDecodeError):
                line = "data: " + json.dumps(
                    trim(json.loads(line[6:])), ensure_ascii=False, separators=(",", ":")
                )
        lines.append(line)
    return "\n".join(lines)


def request_of(provider: Provider, request: dict[str, Any]) -> dict[str, Any] | None:
    url = urlsplit(request.get("uri", ""))
    if url.hostname != provider.host:
        return None
    method = request.get("method", "").upper()  # some recorders keep `post`
    if not provider.knows(method, url.path):
        return None
    body: Any = None
    files: dict[str, str] | None = None
    if "parsed_body" in request:
        body = request["parsed_body"]
    else:
        data = body_bytes(request.get("body"))
        content_type = header(request.get("headers"), "content-type") or ""
        if data and content_type.startswith("multipart/form-data"):
            form = multipart_form(data)
            if form is None:
                return None
            body, files = form
        elif data:
            try:
                body = json.loads(data)
            except (json.JSONDecodeError, UnicodeDecodeError):
                return None
    # A credential in the query (Gemini's `?key=`) is never copied, nor its name.
    query = {k: v for k, v in parse_qsl(url.query) if not is_secret_query_name(k)}
    kept: dict[str, Any] = {"method": method, "path": url.path, "query": query}
    headers = {
        name: value
        for name in provider.request_headers
        if (value := header(request.get("headers"), name)) is not None
    }
    if headers:
        kept["headers"] = headers
    if files is not None:
        return {**kept, "body": body, "files": files}
    return {**kept, "body": cut_long_texts(trim(body))}


def multipart_form(data: bytes) -> tuple[dict[str, str], dict[str, str]] | None:
    """A multipart upload's text fields, and its file fields' file names (never their
    bytes: the corpus test uploads a placeholder in their place)."""
    if not data.startswith(b"--"):
        with contextlib.suppress(ValueError):
            data = base64.b64decode(data, validate=True)  # some recorders keep it encoded
    boundary = data.split(b"\r\n", 1)[0][2:]
    if not data.startswith(b"--") or not boundary:
        return None
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b'Content-Type: multipart/form-data; boundary="' + boundary + b'"\r\n\r\n' + data
    )
    fields: dict[str, str] = {}
    files: dict[str, str] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        filename = part.get_param("filename", header="content-disposition")
        payload = part.get_payload(decode=True)
        if not isinstance(name, str) or not isinstance(payload, bytes):
            return None
        if isinstance(filename, str):
            files[name] = filename
        else:
            fields[name] = payload.decode()
    return fields, files


def response_of(response: dict[str, Any]) -> dict[str, Any] | None:
    headers = response.get("headers") or {}
    content_type = header(headers, "content-type") or ""
    # vcrpy's httpx stubs once wrote `status_code` and `content` instead.
    status = (response.get("status") or {}).get("code", response.get("status_code"))
    if not isinstance(status, int):
        return None
    base = {"status": status, "content_type": content_type}
    if "parsed_body" in response:
        return {**base, "body": trim(response["parsed_body"])}
    data = body_bytes(response["body"] if "body" in response else response.get("content"))
    if data is None:
        return None
    data = decode(data, header(headers, "content-encoding"))
    if data is None:
        return None
    try:
        text = data.decode()
    except UnicodeDecodeError:
        # Audio and the like: the first bytes stand for the whole body.
        kept = base64.b64encode(data[:BINARY_KEEP]).decode()
        return {**base, "base64": kept, "size": len(data)}
    if content_type.startswith("text/event-stream") or text.lstrip().startswith(
        ("data: ", "event: ")
    ):
        return {**base, "content_type": "text/event-stream", "sse": sse_text(text)}
    try:
        return {**base, "body": trim(json.loads(text))}
    except json.JSONDecodeError:
        if "json" in content_type:
            return None  # not what the API sent (an empty or cut body): a recorder's artefact
        return {**base, "text": text}


def git(clone: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(clone), *args], capture_output=True, text=True, check=True
    ).stdout


_WORD = r"v1|v1beta|[a-z]+(_[a-z]+)*|[a-z]+([A-Z][a-z]+)*|"


def kind_path(path: str) -> str:
    """The path with its parameters (anything but a lowercase word, and a model's name)
    as `{id}`, so they do not make a kind of their own; a Gemini method after a colon
    (`models/gemini-2.5-flash:generateContent`) stays."""
    parts = path.split("/")
    kinds: list[str] = []
    for index, part in enumerate(parts):
        name, colon, action = part.partition(":")
        if not re.fullmatch(_WORD, name) or (index > 0 and parts[index - 1] == "models"):
            name = "{id}"
        kinds.append(name + colon + action)
    return "/".join(kinds)


def openai_items(body: dict[str, Any]) -> set[str]:
    """A Responses answer's (or stream event's) output item types, and `tool_calls`
    for a Chat Completions message or delta that calls tools."""
    items = list(body.get("output") or [])
    if isinstance(body.get("item"), dict):
        items.append(body["item"])
    seen = {str(item.get("type")) for item in items if isinstance(item, dict)}
    for choice in body.get("choices") or []:
        message = choice.get("message") or choice.get("delta") or {}
        if message.get("tool_calls"):
            seen.add("tool_calls")
    return seen


def anthropic_items(body: dict[str, Any]) -> set[str]:
    """A message's content block types (a stream's, from its `content_block_start`
    events), and an error's type."""
    blocks = list(body.get("content") or [])
    if isinstance(body.get("content_block"), dict):
        blocks.append(body["content_block"])
    seen = {str(block.get("type")) for block in blocks if isinstance(block, dict)}
    error = body.get("error")
    if isinstance(error, dict):
        seen.add(f"error:{error.get('type')}")
    return seen


def gemini_items(body: dict[str, Any]) -> set[str]:
    """A candidate's part kinds (`text`, `thought`, `functionCall`, `inlineData`, ...),
    `grounding` when it is grounded, a finish reason other than STOP, an error's status."""
    seen: set[str] = set()
    for candidate in body.get("candidates") or []:
        if not isinstance(candidate, dict):
            continue
        for part in (candidate.get("content") or {}).get("parts") or []:
            if isinstance(part, dict):
                seen.update("thought" if key == "thought" else key for key in part)
        if candidate.get("groundingMetadata"):
            seen.add("grounding")
        if candidate.get("finishReason") not in (None, "STOP"):
            seen.add(f"finish:{candidate['finishReason']}")
    seen -= {"thoughtSignature"}  # beside a text or a call: says nothing of its own
    error = body.get("error")
    if isinstance(error, dict):
        seen.add(f"error:{error.get('status')}")
    return seen


def kind_of(provider: Provider, pair: dict[str, Any]) -> tuple[str, ...]:
    """What a pair exercises: endpoint, status, JSON or stream, and the item kinds seen."""
    request, response = pair["request"], pair["response"]
    path = kind_path(request["path"])
    if request["query"]:  # `?beta=true` (another SDK resource), `?alt=sse`
        path += "?" + "&".join(sorted(request["query"]))
    seen: set[str] = set()
    bodies: list[Any] = [response.get("body")]
    for line in response.get("sse", "").split("\n"):
        if line.startswith("data: {"):
            bodies.append(json.loads(line[6:]))
    for body in bodies:
        if isinstance(body, dict):
            seen |= provider.items(body)
    mode = next(m for m in ("sse", "text", "base64", "body") if m in response)
    mode = {"body": "json", "base64": "binary"}.get(mode, mode)
    if "files" in request:
        mode = f"multipart {mode}"
    return (request["method"], path, str(response["status"]), mode, *sorted(seen))


@dataclass(frozen=True)
class Provider:
    """One API's corpus: where its traffic goes, the endpoints its test calls, where the
    pairs come from, and what makes two answers of one endpoint different kinds."""

    name: str  # its folder here, and its section of the README
    title: str
    host: str
    endpoints: tuple[tuple[str, str], ...]  # method and path pattern (a regex)
    sources: tuple[tuple[str, str], ...]  # repository and its licence
    items: Callable[[dict[str, Any]], set[str]]
    per_kind: int
    request_headers: tuple[str, ...] = ()
    round_tripped: str = ""  # how the candidates were checked, for the README
    # Why a request of a known endpoint is still no candidate (None: it is one).
    refuses: Callable[[dict[str, Any]], str | None] = lambda request: None

    def knows(self, method: str, path: str) -> bool:
        return any(method == m and re.fullmatch(p, path) for m, p in self.endpoints)


OPENAI = Provider(
    name="openai",
    title="OpenAI",
    host="api.openai.com",
    # Endpoints the corpus test knows how to call through the SDK's own resource
    # methods (its ROUTES).
    endpoints=tuple(
        (method, f"/v1/{path}")
        for method, path in (
            ("POST", "responses"),
            ("GET", f"responses/{ID}"),
            ("POST", "responses/compact"),
            ("POST", "responses/input_tokens"),
            ("POST", "chat/completions"),
            ("POST", "completions"),
            ("POST", "embeddings"),
            ("POST", "audio/speech"),
            ("POST", "audio/transcriptions"),
            ("POST", "files"),
            ("GET", f"files/{ID}/content"),
            ("POST", "realtime/calls"),
            ("POST", "moderations"),
            ("POST", "images/generations"),
            ("POST", "conversations"),
            ("DELETE", f"conversations/{ID}"),
            ("GET", "files"),
            ("GET", f"files/{ID}"),
            ("DELETE", f"files/{ID}"),
            ("GET", "models"),
            ("GET", f"models/{ID}"),
            ("DELETE", f"models/{ID}"),
            ("POST", "vector_stores"),
            ("DELETE", f"vector_stores/{ID}"),
            ("POST", f"vector_stores/{ID}/files"),
            ("POST", "realtime/client_secrets"),
            ("POST", "assistants"),
            ("GET", f"assistants/{ID}"),
            ("POST", "threads"),
            ("POST", f"threads/{ID}/messages"),
            ("GET", f"threads/{ID}/messages"),
            ("POST", f"threads/{ID}/runs"),
            ("GET", f"threads/{ID}/runs/{ID}"),
            ("POST", f"threads/{ID}/runs/{ID}/submit_tool_outputs"),
        )
    ),
    sources=(
        ("pydantic/pydantic-ai", "MIT"),
        ("simonw/llm", "Apache-2.0"),
        ("traceloop/openllmetry", "Apache-2.0"),
        ("pydantic/logfire", "MIT"),
        ("crewAIInc/crewAI", "MIT"),
        ("Arize-ai/openinference", "Apache-2.0"),
        ("open-telemetry/opentelemetry-python-contrib", "Apache-2.0"),
        ("Mirascope/mirascope", "MIT"),
        ("langchain-ai/langsmith-sdk", "MIT"),
        ("DataDog/dd-trace-py", "Apache-2.0"),  # dual-licensed Apache-2.0 or BSD-3-Clause
        ("elastic/elastic-otel-python-instrumentations", "Apache-2.0"),
    ),
    items=openai_items,
    per_kind=15,
    round_tripped="under both SDK lines",
)
ANTHROPIC = Provider(
    name="anthropic",
    title="Anthropic",
    host="api.anthropic.com",
    endpoints=tuple(
        (method, f"/v1/{path}")
        for method, path in (
            ("POST", "messages"),
            ("POST", "messages/count_tokens"),
            ("POST", "files"),
            ("DELETE", f"files/{ID}"),
        )
    ),
    sources=(
        ("pydantic/pydantic-ai", "MIT"),
        ("Arize-ai/openinference", "Apache-2.0"),
        ("traceloop/openllmetry", "Apache-2.0"),
        ("Mirascope/mirascope", "MIT"),
        ("crewAIInc/crewAI", "MIT"),
        ("simonw/llm-anthropic", "Apache-2.0"),
        ("DataDog/dd-trace-py", "Apache-2.0"),  # dual-licensed Apache-2.0 or BSD-3-Clause
    ),
    items=anthropic_items,
    per_kind=4,
    request_headers=("anthropic-beta",),
    round_tripped="through `instrument()` under the locked SDK, sync and async",
)


def gemini_refuses(request: dict[str, Any]) -> str | None:
    if request["path"].endswith(":streamGenerateContent") and request["query"].get("alt") != "sse":
        return (
            "`streamGenerateContent` without `alt=sse` (a JSON array, which the Python SDK "
            "never asks for)"
        )
    return None


_MODEL = r"/v1beta/models/[^/:]+"
GEMINI = Provider(
    name="gemini",
    title="Google Gemini",
    host="generativelanguage.googleapis.com",
    endpoints=(
        ("POST", rf"{_MODEL}:generateContent"),
        ("POST", rf"{_MODEL}:streamGenerateContent"),
        ("POST", rf"{_MODEL}:countTokens"),
        ("POST", rf"{_MODEL}:batchEmbedContents"),
        ("GET", "/v1beta/models"),
        ("GET", rf"{_MODEL}"),
    ),
    sources=(
        ("pydantic/pydantic-ai", "MIT"),
        ("Arize-ai/openinference", "Apache-2.0"),
        ("Mirascope/mirascope", "MIT"),
        ("crewAIInc/crewAI", "MIT"),
        ("simonw/llm-gemini", "Apache-2.0"),
        ("traceloop/openllmetry", "Apache-2.0"),
        ("DataDog/dd-trace-py", "Apache-2.0"),  # dual-licensed Apache-2.0 or BSD-3-Clause
    ),
    items=gemini_items,
    per_kind=4,
    round_tripped="through the plain SDK and `instrument()`, sync and async",
    refuses=gemini_refuses,
)
PROVIDERS = {provider.name: provider for provider in (OPENAI, ANTHROPIC, GEMINI)}


class CassetteLoader(yaml.CSafeLoader):
    """YAML with the header-name tags some recorders leave (`multidict.istr`) read as text."""


def _istr(loader: CassetteLoader, suffix: str, node: yaml.Node) -> str:
    assert isinstance(node, yaml.SequenceNode)
    return str(loader.construct_sequence(node)[0])


for _how in ("apply", "new"):
    CassetteLoader.add_multi_constructor(
        f"tag:yaml.org,2002:python/object/{_how}:multidict.", _istr
    )


def har_interaction(entry: dict[str, Any]) -> dict[str, Any]:
    """A HAR entry (Polly.js cassettes) in the shape of a VCR interaction."""
    request, response = entry.get("request") or {}, entry.get("response") or {}
    content = response.get("content") or {}
    text = content.get("text")
    if text is not None and content.get("encoding") == "base64":
        text = base64.b64decode(text)
    return {
        "request": {
            "uri": request.get("url", ""),
            "method": request.get("method", ""),
            "headers": {h["name"]: [h["value"]] for h in request.get("headers") or []},
            "body": (request.get("postData") or {}).get("text"),
        },
        "response": {
            "status": {"code": response.get("status")},
            # HAR keeps the body decoded: its content-encoding no longer applies.
            "headers": {
                h["name"]: [h["value"]]
                for h in response.get("headers") or []
                if h["name"].lower() != "content-encoding"
            },
            "body": {"string": text},
        },
    }


def cassette_pairs(
    provider: Provider, clone: Path, path: str, left_out: Counter[str]
) -> list[dict[str, Any]]:
    """The provider's pairs of a VCR (YAML) or HAR (JSON) cassette; why others were not
    taken is counted in `left_out`."""
    try:
        document = yaml.load(git(clone, "show", f"HEAD:{path}"), Loader=CassetteLoader)
    except (subprocess.CalledProcessError, yaml.YAMLError):
        document = None
    if not isinstance(document, dict):
        left_out["a cassette neither YAML nor JSON this script reads"] += 1
        return []
    interactions: list[Any] = document.get("interactions") or [
        har_interaction(entry) for entry in (document.get("log") or {}).get("entries") or []
    ]
    pairs: list[dict[str, Any]] = []
    for interaction in interactions:
        raw = interaction.get("request") or {}
        url = urlsplit(raw.get("uri", ""))
        if url.hostname != provider.host:
            continue
        request = request_of(provider, raw)
        response = response_of(interaction.get("response") or {})
        refused = provider.refuses(request) if request is not None else None
        if refused is not None:
            left_out[refused] += 1
        elif request is not None and response is not None:
            pairs.append({"request": request, "response": response})
        elif not provider.knows(method := raw.get("method", "").upper(), url.path):
            left_out[f"`{method} {kind_path(url.path)}`: an endpoint the test does not call"] += 1
        elif request is None:
            left_out["a request body neither JSON nor a multipart form"] += 1
        else:
            left_out[
                "a response body empty or cut although its content type says JSON "
                "(a recorder's artefact: the API sends neither)"
            ] += 1
    return pairs


SECTION = "<!-- corpus:{name} -->"
SECTION_END = "<!-- /corpus:{name} -->"


def readme_section(
    provider: Provider, files: dict[str, dict[str, Any]], tried: dict[str, Counter[str]]
) -> list[str]:
    """The provider's part of the README: what each source gave and what was left out of
    it, the pairs of each kind, and every file's origin."""
    kinds: dict[str, int] = {}
    for document in files.values():
        for pair in document["pairs"]:
            kind = kind_of(provider, pair)
            label = f"{kind[0]} {kind[1]} {kind[3]} {kind[2]}"
            kinds[label] = kinds.get(label, 0) + 1
    licences = sorted({licence for _, licence in provider.sources})
    pairs = sum(len(document["pairs"]) for document in files.values())
    return [
        f"## {provider.title} (`{provider.name}/`)",
        "",
        textwrap.fill(
            f"{pairs} pairs in {len(files)} files, recorded against https://{provider.host}; "
            f"at most {provider.per_kind} pairs of each kind (endpoint, status, body mode, "
            "and the kinds of items, blocks or parts of the answer), mixing sources. "
            f"Licences: {', '.join(licences)}.",
            width=88,
        ),
        "",
        "### What each source gave",
        "",
        textwrap.fill(
            f"Interactions with {provider.host} in the source's cassettes: the candidate "
            f"pairs (every one was round-tripped, through `--all`, {provider.round_tripped} "
            "before this selection was cut), and each interaction left out, with why.",
            width=88,
        ),
        "",
        "| repository | candidates | left out |",
        "|------------|-----------:|----------|",
        *(
            f"| {repository} | {counts['candidates']} | "
            + (
                "; ".join(
                    f"{count} {reason}"
                    for reason, count in sorted(counts.items())
                    if reason != "candidates"
                )
                or "none"
            )
            + " |"
            for repository, counts in tried.items()
        ),
        "",
        "### Pairs by endpoint, body mode and status",
        "",
        "| pairs | method, endpoint, body mode, status |",
        "|------:|------------------------|",
        *(f"| {count} | {label} |" for label, count in sorted(kinds.items())),
        "",
        "### Sources",
        "",
        "| file | repository | path | commit | licence | pairs |",
        "|------|------------|------|--------|---------|------:|",
        *(
            f"| `{provider.name}/{name}.json` | {files[name]['source']['repository']} "
            f"| `{files[name]['source']['path']}` | `{files[name]['source']['commit'][:12]}` "
            f"| {files[name]['source']['licence']} | {len(files[name]['pairs'])} |"
            for name in sorted(files)
        ),
    ]


def write_readme(provider: Provider, lines: list[str]) -> None:
    """Replace the provider's section of the README (between its markers, appended when
    it has none), leaving the rest as it is."""
    readme = CORPUS_DIR / "README.md"
    text = readme.read_text()
    start, end = SECTION.format(name=provider.name), SECTION_END.format(name=provider.name)
    section = "\n".join([start, *lines, end])
    if start in text:
        before, rest = text.split(start, 1)
        text = before + section + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    temporary = readme.with_name(readme.name + ".tmp")
    temporary.write_text(text)
    temporary.replace(readme)


Candidate = tuple[int, int, str, dict[str, Any], dict[str, Any]]


def file_name(files: dict[str, dict[str, Any]], origin: dict[str, str]) -> str:
    """The corpus file of a cassette: repository, folder and stem, unique per path."""
    path = Path(origin["path"])
    stem = re.sub(r"[^\w.-]+", "_", f"{path.parent.name}__{path.stem}")
    name = origin["repository"].replace("/", "__") + "__" + stem
    if name in files and files[name]["source"]["path"] != origin["path"]:
        # Two cassettes with the same folder and stem in different places.
        name += "__" + hashlib.sha256(origin["path"].encode()).hexdigest()[:8]
    return name


def write_files(folder: Path, files: dict[str, dict[str, Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.json"):
        old.unlink()
    for name, document in files.items():
        document["pairs"].sort(key=lambda pair: json.dumps(pair))
        (folder / f"{name}.json").write_text(
            json.dumps(document, indent=1, ensure_ascii=False) + "\n"
        )


def main(argv: list[str]) -> int:
    """Extract the provider's sources below CLONE_ROOT (CLONE_ROOT/OWNER+NAME[/repo])
    and select."""
    if len(argv) not in (2, 4) or argv[0] not in PROVIDERS or argv[2:3] not in ([], ["--all"]):
        print(__doc__, file=sys.stderr)
        return 2
    provider, root = PROVIDERS[argv[0]], Path(argv[1])
    every_pair_to = Path(argv[3]) / provider.name if len(argv) == 4 else None
    candidates: dict[tuple[str, ...], list[Candidate]] = {}
    everything: dict[str, dict[str, Any]] = {}
    tried: dict[str, Counter[str]] = {}
    order = 0
    for repository, licence in provider.sources:
        left_out = tried[repository] = Counter[str]()
        clone = root / repository.replace("/", "+")
        clone = clone / "repo" if (clone / "repo").exists() else clone
        commit = git(clone, "rev-parse", "HEAD").strip()
        listed = git(clone, "grep", "-l", provider.host, "HEAD", "--", "*cassettes*")
        for entry in sorted(listed.split("\n")):
            if not entry:
                continue
            path = entry.split(":", 1)[1]
            origin = {"repository": repository, "path": path, "commit": commit, "licence": licence}
            for pair in cassette_pairs(provider, clone, path, left_out):
                left_out["candidates"] += 1
                name = file_name(everything, origin)
                everything.setdefault(name, {"source": origin, "pairs": []})["pairs"].append(pair)
                size = len(json.dumps(pair))
                if size > MAX_PAIR_CHARS:
                    left_out[f"larger than {MAX_PAIR_CHARS:,} characters (`--all` only)"] += 1
                else:
                    order += 1
                    candidates.setdefault(kind_of(provider, pair), []).append(
                        (size, order, path, origin, pair)
                    )
    if every_pair_to is not None:
        write_files(every_pair_to, everything)
        print(
            f"{sum(len(d['pairs']) for d in everything.values())} pairs in {len(everything)} files"
        )
        return 0
    files: dict[str, dict[str, Any]] = {}
    for kind in sorted(candidates):
        # Round-robin over sources, smallest first, so each kind mixes projects.
        by_source: dict[str, list[Candidate]] = {}
        for candidate in sorted(candidates[kind], key=lambda c: c[:3]):
            by_source.setdefault(candidate[3]["repository"], []).append(candidate)
        chosen: list[Candidate] = []
        while len(chosen) < provider.per_kind and any(by_source.values()):
            for queue in by_source.values():
                if queue and len(chosen) < provider.per_kind:
                    chosen.append(queue.pop(0))
        for _size, _order, _path, origin, pair in sorted(chosen, key=lambda c: c[1]):
            name = file_name(files, origin)
            files.setdefault(name, {"source": origin, "pairs": []})["pairs"].append(pair)
    write_files(CORPUS_DIR / provider.name, files)
    write_readme(provider, readme_section(provider, files, tried))
    print(f"{sum(len(d['pairs']) for d in files.values())} pairs in {len(files)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
