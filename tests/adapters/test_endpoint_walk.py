"""Nothing an instrumented client does reaches a transport during replay, for any endpoint.

The walk (tests/adapters/endpoint_walk.py) finds every resource method the
installed SDK exposes on the client (resources recursively, and their
`with_raw_response` and `with_streaming_response` forms), calls each under replay
of an empty trace with arguments made from its signature, and counts the requests the client's
own transport receives: zero. Each call ends in a refusal by Tool Replay, or in
the SDK refusing the made-up arguments before building a request; none may
return a response.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import openai
import pytest
from openai._resource import AsyncAPIResource, SyncAPIResource  # the SDK's resource bases

from examples.local_openai import HTTP, refusing
from tests.adapters.endpoint_walk import walk
from tests.adapters.support import async_client, sync_client
from toolreplay.adapters.openai import instrument

ADMIN_KEYS = "admin_api_key" in inspect.signature(openai.OpenAI).parameters
RESOURCES = (SyncAPIResource, AsyncAPIResource)


# The walk calls every endpoint the SDK has, its deprecated ones (Assistants, Sora,
# `.content()`...) on purpose: the SDK's deprecation warnings, raised by its own
# modules or at the walk's call, are expected. One our adapter's code triggered would
# name a toolreplay module, and still show.
@pytest.mark.filterwarnings("ignore::DeprecationWarning:openai")
@pytest.mark.filterwarnings(r"ignore::DeprecationWarning:tests\.adapters\.endpoint_walk")
@pytest.mark.parametrize("flavour", ["sync", "async", "azure"])
def test_every_endpoint_is_refused_under_replay_and_sends_nothing(
    flavour: str, tmp_path: Path
) -> None:
    sent: list[Any] = []
    # openai 3.x's organisation-admin endpoints need an admin key before any request.
    admin = {"admin_api_key": "sk-admin-walk"} if ADMIN_KEYS else {}
    if flavour == "sync":
        client: Any = instrument(sync_client(refusing(sent), **admin))
    elif flavour == "async":
        client = instrument(async_client(refusing(sent), **admin))
    else:
        client = instrument(
            openai.AzureOpenAI(
                api_key="azure-key",
                api_version="2025-04-01-preview",
                azure_endpoint="https://example-resource.openai.azure.com",
                http_client=HTTP.Client(transport=HTTP.MockTransport(refusing(sent))),
                max_retries=0,
            )
        )
    outcomes: dict[str, list[str]] = {"refused": [], "sdk": [], "returned": []}
    for walked in walk(client, tmp_path, RESOURCES):
        outcomes[walked.outcome].append(walked.where)
    total = sum(len(names) for names in outcomes.values())
    assert sent == [], [f"{request.method} {request.url.path}" for request in sent]
    assert total > 200  # the walk found the SDK's surface
    # A few methods need no request for made-up arguments (an empty upload, webhook checks).
    assert len(outcomes["returned"]) <= 0.02 * total, outcomes["returned"]
    # Nearly every endpoint gets as far as a request, which Tool Replay refuses.
    assert len(outcomes["refused"]) > 0.8 * total, outcomes["sdk"]
    print(flavour, {kind: len(names) for kind, names in outcomes.items()})
