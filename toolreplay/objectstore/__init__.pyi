__all__: list[str]  # the names below, in order; set at import

from toolreplay.objectstore.cache import (
    MAX_TRACE_BYTES as MAX_TRACE_BYTES,
    cache_folder as cache_folder,
    fetched_trace as fetched_trace,
)
from toolreplay.objectstore.fetching import (
    fetch_objects as fetch_objects,
)
from toolreplay.objectstore.listing import (
    StoredTrace as StoredTrace,
    list_traces as list_traces,
)
from toolreplay.objectstore.locations import (
    ObjectLocation as ObjectLocation,
    days_between as days_between,
    is_object_url as is_object_url,
    object_location as object_location,
)
from toolreplay.objectstore.stores import (
    open_store as open_store,
    store_failure as store_failure,
)
