"""The real-traffic corpus (`corpus/<provider>/*.json`), as the provider tests read it.

Each file holds one cassette's pairs and where it came from (`source`: repository,
path, commit, licence); each pair is a request (method, path, query, JSON body, and
for some providers the request headers that choose what the API does) and the response
the real API sent (status, content type, and the body as JSON, server-sent events,
text or base64). The provider is the folder: `openai`, `anthropic`, `gemini`.
`corpus/extract_cassettes.py` writes them and the README that lists every source.

What the provider tests share is here: loading a provider's pairs, serving a recorded
response from a local transport of the SDK's HTTP library, picking one pair of each
shape, running a check over every pair and listing each failure, and checking that the
README lists every file.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "PROVIDERS",
    "body_mode",
    "corpus_folder",
    "failures",
    "load_pairs",
    "one_per_shape",
    "readme_lists_every_file",
    "requires_corpus",
    "serving",
]

# Where a provider's pairs are looked for, in order: TOOLREPLAY_CORPUS_DIR (another folder of
# pairs in this format, one subfolder per provider: `extract_cassettes.py PROVIDER ROOT --all
# OUT_DIR` writes every candidate pair, before the selection), this folder, and the steering
# repository's `shared/corpus/` beside the checkout. Pairs taken from other projects' cassettes
# after the OpenAI corpus stay out of this repository's commits: the Anthropic and Gemini pairs
# live in `shared/corpus/`, and their tests say so when it is missing.
_ROOTS = tuple(
    Path(root)
    for root in (
        os.environ.get("TOOLREPLAY_CORPUS_DIR"),
        Path(__file__).parent / "corpus",
        Path(__file__).resolve().parents[2].parent / "shared" / "corpus",
    )
    if root
)
README = Path(__file__).parent / "corpus" / "README.md"
PROVIDERS = ("openai", "anthropic", "gemini")
LICENCES = ("MIT", "Apache-2.0", "BSD-3-Clause")


def corpus_folder(provider: str) -> Path | None:
    """The first folder holding the provider's pairs (see `_ROOTS`), or None."""
    if provider not in PROVIDERS:
        raise ValueError(f"no corpus for {provider!r}: the corpus has {', '.join(PROVIDERS)}")
    return next((root / provider for root in _ROOTS if any((root / provider).glob("*.json"))), None)


def requires_corpus(provider: str) -> pytest.MarkDecorator:
    """Skip a provider's corpus tests, saying where the pairs go, when none is found."""
    places = ", ".join(str(root / provider) for root in _ROOTS)
    return pytest.mark.skipif(
        corpus_folder(provider) is None,
        reason=(
            f"the {provider} corpus (real pairs from other projects' public cassettes, kept "
            f"out of this repository's commits) is not here; looked in {places}. Put the "
            "pairs in shared/corpus/ beside the checkout, or name a folder with "
            "TOOLREPLAY_CORPUS_DIR"
        ),
    )


def load_pairs(provider: str) -> list[Any]:
    """Every pair of the provider's corpus, as pytest params named `<file stem>[<index>]`."""
    folder = corpus_folder(provider)
    pairs: list[Any] = []
    for path in sorted(folder.glob("*.json") if folder is not None else ()):
        document = json.loads(path.read_text())
        for index, pair in enumerate(document["pairs"]):
            pairs.append(pytest.param(pair, id=f"{path.stem}[{index}]"))
    return pairs


def serving(response: dict[str, Any], http: Any) -> Callable[[Any], Any]:
    """A handler for `http.MockTransport` (`http` being the SDK's HTTP library, `httpx`
    or `httpx2`) answering every request with the recorded response."""

    def answer(request: Any) -> Any:
        if "body" in response:
            return http.Response(response["status"], json=response["body"])
        if "sse" in response:
            content = response["sse"].encode()
        elif "text" in response:
            content = response["text"].encode()
        else:
            content = base64.b64decode(response["base64"])
        headers = {"content-type": response["content_type"]}
        return http.Response(response["status"], content=content, headers=headers)

    return answer


def body_mode(response: dict[str, Any]) -> str:
    """How a recorded body is encoded: `body` (JSON), `sse`, `text` or `bytes`."""
    return next((kind for kind in ("body", "sse", "text") if kind in response), "bytes")


def one_per_shape(pairs: list[Any], shape_of: Callable[[dict[str, Any]], Hashable]) -> list[Any]:
    """The first pair of each shape: the default run's one test per shape."""
    seen: dict[Hashable, Any] = {}
    for param in pairs:
        seen.setdefault(shape_of(param.values[0]), param)
    return list(seen.values())


def failures(pairs: list[Any], check: Callable[[dict[str, Any], Path], None], folder: Path) -> str:
    """Each pair that fails `check`, with its assertion: every failure, not the first."""
    failed: list[str] = []
    for number, param in enumerate(pairs):
        try:
            check(param.values[0], folder / f"{number}.trp")
        except AssertionError as error:
            failed.append(f"{param.id}: {error}")
    return "\n\n".join(failed)


def readme_lists_every_file(provider: str) -> int:
    """Check that the README names each of the provider's files with its source, and
    that each source is openly licensed and pinned to a commit; the number of files."""
    readme = README.read_text()
    folder = corpus_folder(provider)
    files = sorted(folder.glob("*.json") if folder is not None else ())
    for path in files:
        source = json.loads(path.read_text())["source"]
        assert f"`{provider}/{path.name}`" in readme, path.name
        assert source["licence"] in LICENCES, (path.name, source["licence"])
        assert source["repository"] in readme, path.name
        assert len(source["commit"]) == 40, path.name
    return len(files)
