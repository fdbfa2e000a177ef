"""A runner module that prints and calls an effect while it is imported (a bad idea)."""

from __future__ import annotations

import toolreplay

print("import-time chatter")


@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int) -> dict[str, int]:
    raise AssertionError("a live effect body ran at import time")


CUSTOMER = get_customer(42)


def main() -> None:
    return None
