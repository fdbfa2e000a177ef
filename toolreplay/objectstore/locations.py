"""Object-storage URLs, and where a captured trace's object lies under one.

A location is a URL whose scheme names the store: `s3://bucket/prefix` (Amazon S3
and every S3-compatible server), `gs://bucket/prefix` (Google Cloud Storage),
`az://container/prefix` (Azure Blob Storage), `file:///absolute/folder` (a local
folder laid out as a bucket, for tests and for a mounted share).

Under the prefix, a captured trace is the object
`date=YYYY-MM-DD/instance=ID/NAME.trp`: the day and the name come from the
request's start time (RFC 0008 §2.3), so no trace is opened to place it; a search
lists only the `date=` prefixes its `--since`/`--until` reach (Hive-style
`key=value` segments, which query engines prune by); `instance=` keeps the traces
of the processes of a fleet apart without any coordination between them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from urllib.parse import unquote, urlsplit

from toolreplay.errors import ObjectStoreError

__all__ = [
    "SCHEMES",
    "ObjectLocation",
    "check_instance",
    "day_of",
    "days_between",
    "is_object_url",
    "object_location",
    "trace_key",
]

SCHEMES = ("s3", "gs", "az", "file")
"""The stores a location may name."""

_DAY = re.compile(r"date=(?P<day>[0-9]{4}-[0-9]{2}-[0-9]{2})")
_INSTANCE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
_BUCKET = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{1,254}")


@dataclass(frozen=True, slots=True)
class ObjectLocation:
    """A bucket (or container, or local folder) and a key prefix in it."""

    url: str
    """The location as given, without a trailing slash (`s3://traces/refunds`)."""
    scheme: str
    """`s3`, `gs`, `az` or `file`."""
    bucket: str
    """The bucket or container; for `file`, the absolute folder."""
    prefix: str
    """The key prefix, without leading or trailing slashes (`""` for the whole bucket)."""

    @property
    def root(self) -> str:
        """The URL of the bucket itself, which a store is opened on."""
        return (
            f"file://{self.bucket}" if self.scheme == "file" else f"{self.scheme}://{self.bucket}"
        )

    def key(self, relative: str) -> str:
        """The key of `relative` (a path below the prefix) in the bucket."""
        return f"{self.prefix}/{relative}" if self.prefix else relative

    def relative(self, key: str) -> str:
        """`key` relative to the prefix (all of it when outside)."""
        head = f"{self.prefix}/" if self.prefix else ""
        return key[len(head) :] if key.startswith(head) else key

    def url_of(self, key: str) -> str:
        """The URL of the object at `key`."""
        return f"{self.root}/{key}"

    def child(self, relative: str) -> ObjectLocation:
        """The location of `relative` below this one (a single trace, say)."""
        return object_location(f"{self.url}/{relative.strip('/')}")


def is_object_url(text: str) -> bool:
    """Whether `text` names object storage (`s3://...`, `gs://`, `az://`, `file://`)."""
    scheme, separator, _ = text.partition("://")
    return bool(separator) and scheme.lower() in SCHEMES


def object_location(url: str) -> ObjectLocation:
    """`url` as an `ObjectLocation`; `ObjectStoreError` naming what does not read."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES or "://" not in url:
        raise ObjectStoreError(
            f"{url!r} is not an object-storage location: give s3://BUCKET/PREFIX, "
            "gs://BUCKET/PREFIX, az://CONTAINER/PREFIX or file:///ABSOLUTE/FOLDER"
        )
    if parts.query or parts.fragment or parts.username or parts.password:
        # Credentials in a URL would end up in logs and shell history: they come from
        # the store's standard places instead (environment, profile, instance role).
        raise ObjectStoreError(
            f"{parts.scheme}://{parts.hostname or ''}...: a location holds no credentials, "
            "query or fragment; credentials come from the environment, a profile or the "
            "instance's role"
        )
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise ObjectStoreError(
                f"{url!r}: a file location is file:///ABSOLUTE/FOLDER (three slashes)"
            )
        folder = unquote(parts.path).rstrip("/")
        if not folder.startswith("/"):
            raise ObjectStoreError(f"{url!r}: a file location needs an absolute folder")
        return ObjectLocation(f"file://{folder}", scheme, folder, "")
    bucket = parts.netloc
    if _BUCKET.fullmatch(bucket) is None:
        raise ObjectStoreError(
            f"{url!r}: {bucket!r} is not a bucket name (letters, digits, '.', '-', '_', "
            "at least 2 characters)"
        )
    prefix = unquote(parts.path).strip("/")
    if any(segment in ("", ".", "..") for segment in prefix.split("/")) and prefix:
        raise ObjectStoreError(f"{url!r}: the prefix has an empty, '.' or '..' segment")
    url_text = f"{scheme}://{bucket}" + (f"/{prefix}" if prefix else "")
    return ObjectLocation(url_text, scheme, bucket, prefix)


def check_instance(instance: str) -> str:
    """`instance` if it can be a key segment, else `ObjectStoreError` saying what can."""
    if _INSTANCE.fullmatch(instance) is None:
        raise ObjectStoreError(
            f"instance {instance!r}: an instance id is 1 to 63 letters, digits, '.', '-' "
            "or '_', starting with a letter or digit"
        )
    return instance


def trace_key(location: ObjectLocation, started: datetime, name: str, instance: str) -> str:
    """The key of the captured trace `name` (no suffix), whose request started at `started`."""
    day = started.astimezone(UTC).date().isoformat()
    return location.key(f"date={day}/instance={check_instance(instance)}/{name}.trp")


def day_of(key: str) -> date | None:
    """The day of a key's `date=YYYY-MM-DD` segment (None: it has none, or no such day)."""
    match = _DAY.search(key)
    if match is None:
        return None
    try:
        return date.fromisoformat(match["day"])
    except ValueError:
        return None


def days_between(since: datetime, until: datetime | None) -> list[date]:
    """Every UTC day from `since`'s to `until`'s (today's when None), oldest first."""
    first = since.astimezone(UTC).date()
    last = (until or datetime.now(UTC)).astimezone(UTC).date()
    return [first + timedelta(days=offset) for offset in range((last - first).days + 1)]
