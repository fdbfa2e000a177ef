"""The run protocol: the JSON documents `toolreplay` commands print with `--format json`.

    document = RunDocument.from_json(completed.stdout)   # ProtocolError if it is not one
    if document.outcome == "replay_contract_error" and document.error is not None:
        print(document.error.type, [op.logical_id for op in document.error.candidates])

One typed home for what the commands write and what their readers (the terminal
UI, CI scripts) read: `record`, `replay` and `fork` print a `RunDocument`
(RFC 0004 §4.5-4.6), `promote` a `PromoteDocument` and `verify` a `VerifyDocument`
(RFC 0005 §4.1-4.2). Each document has `to_dict` (exactly what the command prints)
and `from_dict`/`from_json`, which check the version first (`ProtocolVersionError`
for one this module does not read) and then every field (`ProtocolError` naming
it). A change of keys or meanings bumps the document's version constant (in `run`
or `cases`) and the RFC.

Three modules: `run` (the run document and the error it reports), `cases` (the
promote and verify documents) and `reading` (what reading any of them shares).
"""

from toolreplay.protocol.cases import (
    PROMOTE_FORMAT_VERSION,
    VERIFY_FORMAT_VERSION,
    CaseVerification,
    ErrorSummary,
    PromoteDocument,
    PromoteOutcome,
    PublishedCase,
    VerifyDocument,
    VerifyOutcome,
)
from toolreplay.protocol.reading import prepare_reading
from toolreplay.protocol.run import (
    RUN_PROTOCOL,
    RUN_PROTOCOL_VERSION,
    CallIdentity,
    ErrorReport,
    ReportedOperation,
    RunCommand,
    RunDocument,
    RunOutcome,
)

__all__ = [
    "PROMOTE_FORMAT_VERSION",
    "RUN_PROTOCOL",
    "RUN_PROTOCOL_VERSION",
    "VERIFY_FORMAT_VERSION",
    "CallIdentity",
    "CaseVerification",
    "ErrorReport",
    "ErrorSummary",
    "PromoteDocument",
    "PromoteOutcome",
    "PublishedCase",
    "ReportedOperation",
    "RunCommand",
    "RunDocument",
    "RunOutcome",
    "VerifyDocument",
    "VerifyOutcome",
    "prepare_reading",
]
