"""Finding traces in a folder: which requests called an effect, failed, carried a value.

    for match in toolreplay.find_traces("traces/", effect="billing.refund.create",
                                        where=["$.outcome.status == error"]):
        print(match.path, match.metadata.get("request_id"))

The search streams: one file at a time, read in blocks, and no line is decoded
unless cheap byte tests say it can match. A trace line is written by one
deterministic encoder (RFC 0003 §1.2), so an effect's name, an object key or a
string value always has the same bytes in it: the effect `crm.customer.get` can
only be on a line holding `"namespace":"crm","name":"customer.get"`, and
`$.inputs.email == "a@b.c"` only on one holding `"email":` and `"a@b.c"`. Lines
without those bytes are skipped by `bytes.find`; the few that have them are
decoded and checked exactly. Headers and footers are decoded only for traces
that match. RFC 0008 §4 states the query language and what each part costs.

Two modules: `query` (the query language: conditions, their byte tests, times) and
`scanner` (the folder and each file, read in blocks).

The search reads traces leniently: it never verifies digests or fingerprints
(`read_trace` does, when a match is opened). A file that does not start with a
trace header, or that cannot be read at all (a value nested too deeply to decode,
too large for memory, permissions), is listed in `unreadable` with the reason and
skipped; the other files are still searched.
"""

from toolreplay.search.finding import find_traces
from toolreplay.search.query import OPERATORS, Condition, parse_condition, parse_time
from toolreplay.search.scanner import FoundTrace, TraceSearch

__all__ = [
    "OPERATORS",
    "Condition",
    "FoundTrace",
    "TraceSearch",
    "find_traces",
    "parse_condition",
    "parse_time",
]
