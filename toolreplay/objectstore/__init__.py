"""Object storage for traces: where a capture uploads, what `find` searches, what opens.

`locations` reads a URL (`s3://bucket/prefix`, `gs://`, `az://`, `file://`) and lays
out the keys of captured traces under it (`date=YYYY-MM-DD/instance=ID/NAME.trp`);
`stores` opens the store with the credentials of its standard places; `listing`
lists the traces of the days a search needs; `fetching` reads many objects at once.
Names (declared in `__init__.pyi`) are imported when first used, so
`import toolreplay` never loads the object-store library.
"""

from toolreplay._lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__)
"""The public names of `toolreplay.objectstore`, declared once (as in
`toolreplay/__init__.pyi`)."""
