"""Keep a corrected run as a regression test: promote a fork into a pytest case.

Run it with `uv run python examples/promote_regression_case.py`. Offline.

The recorded incident: the model approved a $1,200 refund that policy says needs
manual review. We fork with the decision the model should have given, check that
the application then sends the refund to review, and promote that fork into a
case folder holding exactly three files. The case is then run the way CI would
run it: by pytest, in a new process, with no network and no credentials.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import toolreplay
from toolreplay import JsonValue


@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int) -> dict[str, JsonValue]:
    return {"id": customer_id, "tier": "gold"}


@toolreplay.effect("llm.refund.decide")
def ask_model(amount: float, tier: str) -> str:
    return "approve"  # the production answer under investigation


def refund_incident() -> dict[str, JsonValue]:
    """The runner a case calls: the application path of the incident, no arguments."""
    customer = get_customer(42)
    decision = ask_model(1200.0, str(customer["tier"]))
    return {"customer": 42, "outcome": "approved" if decision == "approve" else "manual_review"}


def main() -> None:
    here = Path(__file__).resolve().parent
    # The runner is named by module: this file is importable as promote_regression_case.
    runner = "promote_regression_case:refund_incident"
    with tempfile.TemporaryDirectory() as folder:
        incident = Path(folder) / "incident.trp"
        corrected = Path(folder) / "corrected.trp"
        with toolreplay.record(incident):
            print(f"recorded: {refund_incident()}")

        correction = toolreplay.replace_output(
            effect="llm.refund.decide",
            inputs={"amount": 1200.0, "tier": "gold"},
            value="manual_review",
        )
        with toolreplay.fork(incident, corrected, patches=[correction]):
            expected = refund_incident()
        print(f"forked:   {expected}")

        case = toolreplay.promote(
            corrected,
            Path(folder) / "cases" / "refund_over_limit_needs_review",
            name="refund_over_limit_needs_review",
            runner=runner,
            expected=expected,
        )
        assets = sorted(path.name[:24] for path in case.directory.iterdir())
        print(f"promoted: {case.directory.name}/ holds {assets}")
        print(f"  trace sha256: {case.trace_sha256}")

        environment = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
        environment["PYTHONPATH"] = str(here)
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(case.directory)],
            env=environment,
            capture_output=True,
            text=True,
            check=False,
        )
        print(f"pytest on the case: {result.stdout.strip().splitlines()[-1]}")
        assert result.returncode == 0, result.stdout + result.stderr


if __name__ == "__main__":
    main()
