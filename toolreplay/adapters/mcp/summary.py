"""One line that says what an MCP call was: the server, the tool and its arguments, the answer.

`summarize_operation` reads only values (an operation's effect name, inputs and
outcome), so the command line, the terminal debugger and the diff can show an
MCP call without importing the `mcp` SDK. It is kept apart so that it can be
registered with a provider-neutral preview hook.
"""

from __future__ import annotations

from toolreplay.portable import JsonValue, preview

__all__ = ["content_summary", "summarize_operation"]

_NAMESPACE = "mcp"


def summarize_operation(
    effect: str, inputs: JsonValue, output: JsonValue | None, *, limit: int = 100
) -> str | None:
    """`weather · forecast(city="Oslo") → "Sunny, 21 C"`, or None when `effect` is not MCP's.

    `output` is the recorded output (None for a failure or a call not answered).
    """
    namespace, _, rest = effect.partition(".")
    if namespace != _NAMESPACE or "." not in rest:
        return None
    server, _, method = rest.partition(".")
    method = method.replace(".", "/")
    args = inputs if isinstance(inputs, dict) else {}
    if method == "tools/call":
        arguments: JsonValue = args.get("arguments")
        shown = ", ".join(
            f"{key}={preview(value, 30, compact=True)}"
            for key, value in (arguments.items() if isinstance(arguments, dict) else [])
        )
        head = f"{server} · {args.get('name')}({shown})"
    elif method in ("resources/read", "resources/subscribe"):
        head = f"{server} · {method} {args.get('uri')}"
    elif method == "prompts/get":
        head = f"{server} · prompt {args.get('name')}"
    else:
        head = f"{server} · {method}"
    answer = _answer(method, output)
    line = head if answer is None else f"{head} → {answer}"
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _answer(method: str, output: JsonValue | None) -> str | None:
    result = output.get("result") if isinstance(output, dict) else None
    if not isinstance(result, dict):
        return None
    if method == "tools/call":
        summary = content_summary(result.get("content"))
        if result.get("isError") is True:
            return f"tool error: {summary}"
        if summary:
            return summary
        structured = result.get("structuredContent")
        return preview(structured, 60, compact=True) if structured is not None else "(empty)"
    if method == "tools/list":
        tools = result.get("tools")
        names = (
            [t.get("name") for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
        )
        return f"{len(names)} tools: " + ", ".join(str(name) for name in names[:6])
    if method == "resources/read":
        return content_summary(result.get("contents"))
    if method == "initialize":
        info = result.get("serverInfo")
        name = info.get("name") if isinstance(info, dict) else None
        return f"server {name} (protocol {result.get('protocolVersion')})"
    return None


def content_summary(blocks: JsonValue) -> str:
    """Content blocks in a few words: the first text, and how many images and resources."""
    if not isinstance(blocks, list):
        return ""
    texts: list[str] = []
    others: dict[str, int] = {}
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        text = block.get("text")
        if isinstance(text, str):
            texts.append(text)
        elif isinstance(kind, str):
            others[kind] = others.get(kind, 0) + 1
    parts = [preview(texts[0], 60)] if texts else []
    if len(texts) > 1:
        parts.append(f"+{len(texts) - 1} text")
    parts.extend(f"{count} {kind}" for kind, count in sorted(others.items()))
    return ", ".join(parts)
