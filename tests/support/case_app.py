"""A throwaway application module that promoted-case tests record, promote and verify."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

import toolreplay

APP = textwrap.dedent(
    """
    import pathlib, sys
    import toolreplay

    # A visible side effect of importing this module.
    pathlib.Path(__file__).with_suffix(".imported").write_text("imported")

    @toolreplay.effect("crm.customer.get")
    def get_customer(customer_id: int) -> dict:
        return {"id": customer_id, "active": True, "tier": "gold"}

    @toolreplay.effect("llm.refund.decide")
    async def decide(amount: float) -> str:
        return "approve"

    def run() -> dict:
        customer = get_customer(42)
        return {"decision": "approved" if customer["active"] else "rejected", "tier": RESULT_TIER}

    async def run_async() -> dict:
        verdict = await decide(1200.0)
        return {"decision": verdict}

    def needs(arg: int) -> None: ...

    def returns_bytes() -> bytes:
        get_customer(42)
        return b"raw"

    def crashes() -> None:
        get_customer(42)
        raise ValueError("refund pipeline exploded")

    def interrupted() -> None:
        get_customer(42)
        raise KeyboardInterrupt

    def exits() -> None:
        get_customer(42)
        sys.exit(4)

    def different_call() -> dict:
        get_customer(7)
        return {}

    def nests() -> dict:
        get_customer(42)
        with toolreplay.record(pathlib.Path(__file__).with_suffix(".nested.trp")):
            pass
        return {}

    RESULT_TIER = "gold"
    """
)
EXPECTED: dict[str, toolreplay.JsonValue] = {"decision": "approved", "tier": "gold"}


class App:
    """A throwaway application module in its own folder, importable under a unique name."""

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.folder = folder
        self.name = f"case_app_{uuid.uuid4().hex[:10]}"
        self.path = folder / f"{self.name}.py"
        self.path.write_text(APP)
        self.marker = self.path.with_suffix(".imported")
        monkeypatch.syspath_prepend(str(folder))

    def runner(self, function: str = "run") -> str:
        return f"{self.name}:{function}"

    def forget_import(self) -> None:
        sys.modules.pop(self.name, None)
        self.marker.unlink(missing_ok=True)

    def record(self, path: Path, function: str = "run") -> Path:
        import importlib

        module = importlib.import_module(self.name)
        with toolreplay.record(path):
            result = getattr(module, function)()
            if asyncio.iscoroutine(result):
                asyncio.run(result)
        return path


def run_cli(
    app: App, cwd: Path, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`python -m toolreplay ARGS` as a child process that can import `app`'s module."""
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(app.folder)},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
