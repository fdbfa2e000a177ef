"""The environment of a child process that must not reach any provider."""

from __future__ import annotations

import os

# A proxy that goes nowhere: a request that escaped a local transport fails loudly.
NOWHERE = "http://127.0.0.1:9"


def offline_env() -> dict[str, str]:
    """This process's environment without credentials or a chosen model, behind `NOWHERE`.

    A child that tried the network would fail loudly instead of passing by luck.
    """
    env = {k: v for k, v in os.environ.items() if "API_KEY" not in k and k != "OPENAI_MODEL"}
    env.update(HTTPS_PROXY=NOWHERE, HTTP_PROXY=NOWHERE)
    return env
