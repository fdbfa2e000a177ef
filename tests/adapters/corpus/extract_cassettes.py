"""Extract OpenAI request/response pairs from another project's VCR cassettes.

Usage, from the project root::

    uv run python tests/adapters/corpus/extract_cassettes.py CLONE_ROOT

CLONE_ROOT/OWNER+NAME is a git clone (a bare mirror works) of each repository in
SOURCES; cassettes are read at its HEAD commit. Every interaction with api.openai.com on
an endpoint the test knows is a candidate; pairs are grouped by what they exercise
(endpoint, status, JSON or stream, item kinds) and at most PER_KIND of each kind are
kept, mixing sources. Each cassette contributing a pair becomes one JSON file in this
folder holding its origin (repository, path, commit, licence) and its pairs, and the
README in this folder is rewritten to list them. Only what the corpus test needs is
kept: method, path, query and JSON body of the request; status, content type and JSON
body (or the server-sent events as text) of the response. Every header other than the
content type is dropped, and long base64-like strings (images, audio, encrypted
reasoning) are cut to a marked prefix, so nothing secret and nothing large is copied.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import re
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import yaml

CORPUS_DIR = Path(__file__).parent
OPENAI_HOST = "api.openai.com"
# Endpoints the corpus test knows how to call through the SDK's own resource methods.
ENDPOINT_PATTERNS = (
    ("POST", re.compile(r"^/v1/responses$")),
    ("GET", re.compile(r"^/v1/responses/[^/]+$")),
    ("POST", re.compile(r"^/v1/responses/compact$")),
    ("POST", re.compile(r"^/v1/responses/input_tokens$")),
    ("POST", re.compile(r"^/v1/chat/completions$")),
    ("POST", re.compile(r"^/v1/completions$")),
    ("POST", re.compile(r"^/v1/embeddings$")),
    ("POST", re.compile(r"^/v1/moderations$")),
    ("POST", re.compile(r"^/v1/images/generations$")),
    ("POST", re.compile(r"^/v1/conversations$")),
)
# Where the pairs come from (all MIT or Apache-2.0), and how many pairs of one kind to keep.
SOURCES = (
    ("pydantic/pydantic-ai", "MIT"),
    ("simonw/llm", "Apache-2.0"),
    ("traceloop/openllmetry", "Apache-2.0"),
    ("pydantic/logfire", "MIT"),
)
PER_KIND = 15
MAX_PAIR_CHARS = 48_000
LONG_STRING = 256
KEPT_PREFIX = 24
BASE64ISH = re.compile(r"^(data:[\w/+.-]+;base64,)?[A-Za-z0-9+/=_-]+$")
EMBEDDING_KEEP = 8
EMBEDDING_BASE64_KEEP = 32


def trim(value: Any, key: str = "") -> Any:
    """Cut long base64-like strings and long embedding vectors, recursively."""
    if key == "embedding" and isinstance(value, str):
        # Still valid base64 (six float32 values): the SDK may decode it.
        return value[:EMBEDDING_BASE64_KEEP]
    if isinstance(value, str):
        if len(value) > LONG_STRING and BASE64ISH.match(value.replace("\n", "")):
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


def request_of(request: dict[str, Any]) -> dict[str, Any] | None:
    url = urlsplit(request.get("uri", ""))
    if url.hostname != OPENAI_HOST:
        return None
    method = request.get("method", "")
    if not any(method == m and p.match(url.path) for m, p in ENDPOINT_PATTERNS):
        return None
    body: Any = None
    if "parsed_body" in request:
        body = request["parsed_body"]
    else:
        data = body_bytes(request.get("body"))
        if data:
            try:
                body = json.loads(data)
            except (json.JSONDecodeError, UnicodeDecodeError):
                return None  # multipart uploads and the like
    return {
        "method": method,
        "path": url.path,
        "query": dict(parse_qsl(url.query)),
        "body": trim(body),
    }


def response_of(response: dict[str, Any]) -> dict[str, Any] | None:
    headers = response.get("headers") or {}
    content_type = header(headers, "content-type") or ""
    status = (response.get("status") or {}).get("code")
    if not isinstance(status, int):
        return None
    base = {"status": status, "content_type": content_type}
    if "parsed_body" in response:
        return {**base, "body": trim(response["parsed_body"])}
    data = body_bytes(response.get("body"))
    if data is None:
        return None
    data = decode(data, header(headers, "content-encoding"))
    if data is None:
        return None
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return None
    if content_type.startswith("text/event-stream") or text.lstrip().startswith(
        ("data: ", "event: ")
    ):
        return {**base, "content_type": "text/event-stream", "sse": sse_text(text)}
    try:
        return {**base, "body": trim(json.loads(text))}
    except json.JSONDecodeError:
        return None


def git(clone: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(clone), *args], capture_output=True, text=True, check=True
    ).stdout


def kind_of(pair: dict[str, Any]) -> tuple[str, ...]:
    """What a pair exercises: endpoint, status, JSON or stream, and the item kinds seen."""
    request, response = pair["request"], pair["response"]
    path = re.sub(
        r"^/v1/responses/(?!compact$|input_tokens$)[^/]+$", "/v1/responses/{id}", request["path"]
    )
    seen: set[str] = set()
    bodies: list[Any] = [response.get("body")]
    for line in response.get("sse", "").split("\n"):
        if line.startswith("data: {"):
            bodies.append(json.loads(line[6:]))
    for body in bodies:
        if not isinstance(body, dict):
            continue
        items = list(body.get("output") or [])
        if isinstance(body.get("item"), dict):
            items.append(body["item"])
        seen.update(str(item.get("type")) for item in items if isinstance(item, dict))
        for choice in body.get("choices") or []:
            message = choice.get("message") or choice.get("delta") or {}
            if message.get("tool_calls"):
                seen.add("tool_calls")
    mode = "sse" if "sse" in response else "json"
    return (request["method"], path, str(response["status"]), mode, *sorted(seen))


def cassette_pairs(clone: Path, path: str) -> list[dict[str, Any]]:
    try:
        document = yaml.load(git(clone, "show", f"HEAD:{path}"), Loader=yaml.CSafeLoader)
    except (subprocess.CalledProcessError, yaml.YAMLError):
        return []
    pairs: list[dict[str, Any]] = []
    for interaction in (document or {}).get("interactions") or []:
        request = request_of(interaction.get("request") or {})
        response = response_of(interaction.get("response") or {})
        if request is not None and response is not None:
            pairs.append({"request": request, "response": response})
    return pairs


def write_readme(files: dict[str, dict[str, Any]]) -> None:
    """The README: what the corpus is, how it was cut, and every file's origin."""
    kinds: dict[str, int] = {}
    for document in files.values():
        for pair in document["pairs"]:
            kind = kind_of(pair)
            label = f"{kind[1]} {kind[3]} {kind[2]}"
            kinds[label] = kinds.get(label, 0) + 1
    lines = [
        "# Real OpenAI traffic corpus",
        "",
        "Request/response pairs that other open-source projects recorded against the real",
        "OpenAI API in their VCR cassettes, used by `tests/adapters/test_corpus.py`: each pair",
        "is served to the plain SDK and to `instrument()` (record, then replay with a",
        "transport that refuses every request), and the three results must be identical.",
        "",
        "`extract_cassettes.py` wrote every file here from clones of the repositories below",
        "(all MIT or Apache-2.0; their licences apply to these excerpts). Kept: method, path,",
        "query and JSON body of the request; status, content type and JSON body or",
        "server-sent events of the response. Dropped: every other header (keys,",
        "organisations, cookies). Cut: base64-like strings longer than 256 characters",
        "(images, audio, encrypted reasoning) keep a 24-character prefix and a",
        "`...[N chars trimmed]` mark, base64 embeddings keep 32 characters, float",
        "embeddings 8 values. At most "
        + str(PER_KIND)
        + " pairs of each kind (endpoint, status, JSON or stream,",
        "output item kinds) were kept, mixing sources.",
        "",
        "## Pairs by endpoint, mode and status",
        "",
        "| pairs | endpoint, mode, status |",
        "|------:|------------------------|",
        *(f"| {count} | {label} |" for label, count in sorted(kinds.items())),
        "",
        "## Sources",
        "",
        "| file | repository | path | commit | licence | pairs |",
        "|------|------------|------|--------|---------|------:|",
    ]
    for name in sorted(files):
        source = files[name]["source"]
        lines.append(
            f"| `{name}.json` | {source['repository']} | `{source['path']}` "
            f"| `{source['commit'][:12]}` | {source['licence']} | {len(files[name]['pairs'])} |"
        )
    (CORPUS_DIR / "README.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str]) -> int:
    """Extract every source below CLONE_ROOT (CLONE_ROOT/OWNER+NAME[/repo]) and select."""
    root = Path(argv[0])
    candidates: dict[
        tuple[str, ...], list[tuple[int, int, str, dict[str, Any], dict[str, Any]]]
    ] = {}
    order = 0
    for repository, licence in SOURCES:
        clone = root / repository.replace("/", "+")
        clone = clone / "repo" if (clone / "repo").exists() else clone
        commit = git(clone, "rev-parse", "HEAD").strip()
        listed = git(clone, "grep", "-l", OPENAI_HOST, "HEAD", "--", "*cassettes*")
        for entry in sorted(listed.split()):
            path = entry.split(":", 1)[1]
            origin = {"repository": repository, "path": path, "commit": commit, "licence": licence}
            for pair in cassette_pairs(clone, path):
                size = len(json.dumps(pair))
                if size <= MAX_PAIR_CHARS:
                    order += 1
                    candidates.setdefault(kind_of(pair), []).append(
                        (size, order, path, origin, pair)
                    )
    files: dict[str, dict[str, Any]] = {}
    for kind in sorted(candidates):
        # Round-robin over sources, smallest first, so each kind mixes projects.
        by_source: dict[str, list[Any]] = {}
        for candidate in sorted(candidates[kind]):
            by_source.setdefault(candidate[3]["repository"], []).append(candidate)
        chosen: list[Any] = []
        while len(chosen) < PER_KIND and any(by_source.values()):
            for queue in by_source.values():
                if queue and len(chosen) < PER_KIND:
                    chosen.append(queue.pop(0))
        for _size, _order, path, origin, pair in sorted(chosen, key=lambda c: c[1]):
            stem = f"{Path(path).parent.name}__{Path(path).stem}"
            name = origin["repository"].replace("/", "__") + "__" + re.sub(r"[^\w.-]+", "_", stem)
            files.setdefault(name, {"source": origin, "pairs": []})["pairs"].append(pair)
    for old in CORPUS_DIR.glob("*.json"):
        old.unlink()
    for name, document in files.items():
        document["pairs"].sort(key=lambda pair: json.dumps(pair))
        (CORPUS_DIR / f"{name}.json").write_text(
            json.dumps(document, indent=1, ensure_ascii=False) + "\n"
        )
    write_readme(files)
    print(f"{sum(len(d['pairs']) for d in files.values())} pairs in {len(files)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
