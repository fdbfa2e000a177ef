"""Tool Replay: record what an AI application's effects did, replay it offline, strictly.

    import toolreplay

    @toolreplay.effect("crm.customer.get")
    def get_customer(customer_id: int) -> dict[str, object]: ...

    with toolreplay.record("incident.trp"):
        handle_refund(42)          # bodies run; every call is written to the trace

    with toolreplay.replay("incident.trp"):
        handle_refund(42)          # no body runs; recorded outcomes are returned

Importing this package imports neither the command line, textual nor openai, nor any of
its own modules: each public name is imported when first used (PEP 562). The names, and
the module each comes from, are declared once, in `__init__.pyi`.
"""

from toolreplay._lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__)
