"""Capture a service's requests into an S3 bucket, offline, then read one back.

Run it with `uv run python -m examples.capture_s3.run` (it needs the object-store
extra and `moto[server]`, both in the development environment). A local S3 API
(moto's server) is started on 127.0.0.1 in a child process and given a bucket whose
lifecycle rule (`lifecycle.json`) expires captured traces after 30 days: that is how
retention works in a bucket. The service is decorated with
`toolreplay.capture("s3://incidents/traces")`: each request's trace is written to a
local spool as any capture writes it, and uploaded in the background to
`traces/date=YYYY-MM-DD/instance=ID/NAME.trp`. The credentials and the endpoint are
the standard AWS variables, as an instance role or a profile would provide them in
production. No network beyond the loopback interface.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import toolreplay
from toolreplay.objectstore import list_traces, object_location, open_store

HERE = Path(__file__).resolve().parent
BUCKET = "incidents"
_SERVER = r"""
import sys
from moto.server import ThreadedMotoServer
server = ThreadedMotoServer(ip_address="127.0.0.1", port=int(sys.argv[1]), verbose=False)
server.start()
print("ready", flush=True)
sys.stdin.read()
"""


@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int) -> dict[str, toolreplay.JsonValue]:
    return {"id": customer_id, "tier": "pro" if customer_id % 2 else "free"}


@toolreplay.effect("billing.refund.create")
def create_refund(customer_id: int, amount: float) -> dict[str, toolreplay.JsonValue]:
    if amount > 1000:
        raise TimeoutError("billing did not answer within 30s")
    return {"refund_id": f"rf-{customer_id}", "amount": amount}


def refund(customer_id: int, amount: float) -> str:
    """The service: it never knows it is captured."""
    customer = get_customer(customer_id)
    try:
        made = create_refund(customer_id, amount)
    except TimeoutError:
        return f"customer {customer_id} ({customer['tier']}): HTTP 504"
    return f"customer {customer_id} ({customer['tier']}): refunded as {made['refund_id']}"


def start_local_s3() -> subprocess.Popen[str]:
    """moto's S3 server on a free loopback port, and the standard variables pointing at it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdout is not None
    assert server.stdout.readline().strip() == "ready"
    # In production: the instance role (or AWS_PROFILE), and no endpoint (AWS itself).
    os.environ.update(
        AWS_ACCESS_KEY_ID="example-key-id",
        AWS_SECRET_ACCESS_KEY="example-secret",
        AWS_REGION="us-east-1",
        AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}",
        AWS_ALLOW_HTTP="true",
        NO_PROXY="127.0.0.1,localhost",
    )
    return server


def create_bucket_with_retention() -> None:
    import boto3

    s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    s3.create_bucket(Bucket=BUCKET)
    rules = json.loads((HERE / "lifecycle.json").read_text())
    s3.put_bucket_lifecycle_configuration(Bucket=BUCKET, LifecycleConfiguration=rules)
    (rule,) = s3.get_bucket_lifecycle_configuration(Bucket=BUCKET)["Rules"]
    print(
        f"bucket {BUCKET}: lifecycle rule {rule['ID']} expires traces/ after "
        f"{rule['Expiration']['Days']} days"
    )


def main() -> None:
    server = start_local_s3()
    try:
        create_bucket_with_retention()
        with tempfile.TemporaryDirectory(prefix="capture-s3-") as spool:
            os.environ["TOOLREPLAY_CAPTURE_INSTANCE"] = "web-1"  # default: host name and pid
            capture = toolreplay.capture(
                f"s3://{BUCKET}/traces",
                spool=spool,
                metadata=lambda customer_id, amount: {"customer_id": customer_id},
            )
            handler = capture(refund)
            for customer_id, amount in [(1, 20.0), (2, 1500.0), (3, 75.0)]:
                print(handler(customer_id, amount))

            location = object_location(f"s3://{BUCKET}/traces")
            deadline = time.monotonic() + 30
            while len(found := list(list_traces(location))) < 3:
                assert time.monotonic() < deadline, "the uploads did not arrive"
                time.sleep(0.1)
            keys = sorted(trace.key for trace in found)
            print(f"{len(keys)} traces in s3://{BUCKET}/traces/, for example:")
            print("  " + location.relative(keys[0]).split("/", 1)[0] + "/instance=web-1/...")

            import obstore

            store = open_store(location)
            for key in keys:
                copy = Path(spool) / "downloaded.trp"
                copy.write_bytes(bytes(obstore.get(store, key).bytes()))
                trace = toolreplay.read_trace(copy)
                for operation in trace.operations:
                    outcome = operation.outcome
                    if isinstance(outcome, toolreplay.Raised):
                        print(
                            f"customer {trace.header.metadata['customer_id']}: "
                            f"{operation.effect} raised {outcome.error_type}"
                        )
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
