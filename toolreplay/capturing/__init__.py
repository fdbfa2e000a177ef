"""Per-request capture in production: `toolreplay.capture` (RFC 0008).

`api` holds `capture()` and what it returns, `session` the record session that
gives up instead of failing the application, `store` the folder (names,
temporary siblings, retention, logging), `settings` the code and environment
settings, `spool` and `upload` the capture to object storage (a bounded local
spool, a background uploader, `toolreplay capture flush`). Names (declared in
`__init__.pyi`) are imported when first used: `find` reads the folder through
`store` without loading the recording runtime.
"""

from toolreplay._lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__)
