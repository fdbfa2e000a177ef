"""What the real-client tests share: the SDK-line gate and running a promoted case."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import openai
import pytest

from tests.support.case_pytest import case_pytest

ROOT = Path(__file__).resolve().parents[2]
OPENAI_MAJOR = int(openai.__version__.split(".", 1)[0])

needs_openai_3 = pytest.mark.skipif(
    OPENAI_MAJOR < 3,
    reason=(
        f"openai {openai.__version__} is installed: openai-agents 0.24 requires openai>=3 "
        "and pydantic-ai's openai extra openai>=3.31, so neither runs on the 2.x line"
    ),
)


def pytest_on_case(case: Path) -> subprocess.CompletedProcess[str]:
    """Run a promoted case under pytest in a new process, offline, from the project root."""
    env = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
    # A request that escaped the adapter would fail loudly instead of passing by luck.
    env.update(HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9")
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        case_pytest(str(case)),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
