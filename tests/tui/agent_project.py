"""The bundled Agents SDK example as a project for the debugger's tests: recorded, and
forked with the order lookup's answer changed so that the model is asked something new.

`examples/openai_agents_refund.py` is the application, unmodified; its runner serves
the agent with the scripted model of examples/local_openai, in process (so a live call
reaches that model, never the network). The trace is recorded in a child process, as
`toolreplay record` records it.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import toolreplay
from tests.tui.support import cli

ROOT = Path(__file__).resolve().parents[2]
RUNNER = "examples.openai_agents_refund:refund_request"
ORDER_ID = 8812
CHEAPER = {"order_id": ORDER_ID, "total": 250.0, "status": "delivered"}
PARTIAL = {"refund_id": f"rf_{ORDER_ID}", "status": "issued", "amount": 250.0}
MODEL = "openai.responses.create"


@dataclass(frozen=True)
class AgentProject:
    root: Path
    trace: Path

    @property
    def cheaper(self) -> toolreplay.OutputPatch:
        """What if the order had cost 250: the lookup's answer, changed."""
        return toolreplay.replace_output(
            effect="shop.order.lookup", inputs={"order_id": ORDER_ID}, value=CHEAPER
        )


def agent_env() -> dict[str, str]:
    """The children's environment: the repository importable (the example's runner), no
    API key (nothing here reaches a provider), no proxy."""
    env = {k: v for k, v in os.environ.items() if "API_KEY" not in k and k != "PYTHONSTARTUP"}
    env["PYTHONPATH"] = str(ROOT)
    return env


def record_agent(folder: Path) -> AgentProject:
    folder.mkdir(parents=True, exist_ok=True)
    env = agent_env()
    result = cli(folder, "record", "--runner", RUNNER, "--output", "agent.trp", env=env)
    assert result.returncode == 0, result.stderr
    return AgentProject(folder, folder / "agent.trp")


def copy_agent(template: AgentProject, folder: Path) -> AgentProject:
    shutil.copy(template.trace, folder / template.trace.name)
    return AgentProject(folder, folder / template.trace.name)
