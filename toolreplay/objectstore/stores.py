"""Opening a location's store, with credentials from the store's standard places.

The store is `obstore` (Rust's `object_store` under a small Python binding, no
Python dependencies): chosen over `fsspec`'s `s3fs` because, measured against a
local S3 server (`benchmarks/object_store_clients.py`), a 2 KB upload costs 0.56 ms of
CPU against 3.10 (the uploader shares the application's process and s3fs's work holds
the interpreter lock), 3.6 ms of wall time against 8.0, importing it 17 ms against
1,159, and it installs 16 MB in 2 distributions against 35.5 MB in 22.

Credentials are never given in code or in the URL. `obstore` reads the standard
environment of each store (`AWS_ACCESS_KEY_ID`..., `AWS_WEB_IDENTITY_TOKEN_FILE`,
the container and instance roles; `GOOGLE_APPLICATION_CREDENTIALS`; `AZURE_*`) and
the endpoint (`AWS_ENDPOINT_URL`, with `AWS_ALLOW_HTTP=true` for a plain-HTTP
server). It does not read AWS profiles, so when no key is in the environment and a
profile is configured (`AWS_PROFILE`, the shared credentials or config file),
boto3's resolver supplies them (profiles, SSO, assume-role), refreshed as they
expire.

Failures become `ObjectStoreError`s naming the location and the kind of failure:
never the store's response text, which may echo an access key id.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolreplay.errors import ObjectStoreDependencyError, ObjectStoreError
from toolreplay.objectstore.locations import ObjectLocation

if TYPE_CHECKING:
    from obstore.store import ObjectStore, RetryConfig

__all__ = ["open_store", "store_failure"]

_INSTALL = "install it with: pip install 'toolreplay[object-store]'"
# Variables under which obstore finds AWS credentials by itself.
_AWS_NATIVE = (
    "AWS_ACCESS_KEY_ID",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_SKIP_SIGNATURE",
)
_KINDS = {
    "NotFoundError": "not found",
    "FileNotFoundError": "not found",  # a file:// store's missing object
    "PermissionDeniedError": "access denied",
    "UnauthenticatedError": "the credentials were refused or are missing",
    "AlreadyExistsError": "already exists",
    "PreconditionError": "changed meanwhile",
    "InvalidPathError": "not a valid object path",
    "NotSupportedError": "not supported by this store",
    "UnknownConfigurationKeyError": "an unknown store setting",
}


def _aws_profile_configured() -> bool:
    if os.environ.get("AWS_PROFILE") or os.environ.get("AWS_DEFAULT_PROFILE"):
        return True
    home = Path.home()
    files = (
        os.environ.get("AWS_SHARED_CREDENTIALS_FILE") or home / ".aws" / "credentials",
        os.environ.get("AWS_CONFIG_FILE") or home / ".aws" / "config",
    )
    return any(Path(file).is_file() for file in files)


def _aws_profile_provider() -> Any:
    try:
        from obstore.auth.boto3 import Boto3CredentialProvider
    except ImportError:
        raise ObjectStoreDependencyError(
            f"reading an AWS profile needs boto3, part of the object-store extra; {_INSTALL}"
        ) from None
    return Boto3CredentialProvider()


def open_store(
    location: ObjectLocation,
    *,
    retry_config: RetryConfig | None = None,
) -> ObjectStore:
    """The store of `location`'s bucket (keys are then given in full, prefix included).

    `retry_config` is obstore's (its default when None: up to 10 retries over 3
    minutes): a caller that retries by itself, as the capture uploader does, turns
    them off.
    Raises `ObjectStoreDependencyError` when the object-store extra is missing and
    `ObjectStoreError` when the store cannot be configured (no region, say).
    """
    try:
        from obstore.store import from_url
    except ImportError:
        raise ObjectStoreDependencyError(
            f"{location.url}: object storage needs the obstore package; {_INSTALL}"
        ) from None
    try:
        if location.scheme == "file":
            Path(location.bucket).mkdir(parents=True, exist_ok=True)
            return from_url(location.root)
        options: dict[str, Any] = {}
        if retry_config is not None:
            options["retry_config"] = retry_config
        native = any(os.environ.get(variable) for variable in _AWS_NATIVE)
        if location.scheme == "s3" and not native and _aws_profile_configured():
            options["credential_provider"] = _aws_profile_provider()
        return from_url(location.root, **options)
    except ObjectStoreError:
        raise
    except Exception as error:  # obstore's errors, and a profile boto3 cannot read
        raise store_failure(error, location, "open") from None


def store_failure(
    error: BaseException, location: ObjectLocation | str, doing: str
) -> ObjectStoreError:
    """An `ObjectStoreError` for `error`, raised by the store while `doing` something at
    `location`: its kind in words, never the store's text (which may echo a key id)."""
    where = location.url if isinstance(location, ObjectLocation) else location
    kind = _KINDS.get(type(error).__name__)
    if kind is None:
        kind = "the store could not be reached or refused the request"
        if isinstance(error, OSError) and error.strerror:
            kind = error.strerror
    return ObjectStoreError(
        f"{where}: cannot {doing}: {kind} ({type(error).__name__}). Check the URL, that the "
        "store is reachable, and the credentials in the environment, profile or role"
    )
