"""A small concurrent application: a thread pool and an asyncio fan-out over effects.

`JITTER` (a `random.Random`, or None) makes the application sleep a random
moment before each effect call, so replays run under other schedules than the
recording; effect bodies sleep randomly too while recording, so calls overlap
and complete out of order. `BODY_CALLS` counts the bodies that really ran.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import cast

import toolreplay
from toolreplay import JsonValue

BODY_CALLS: Counter[str] = Counter()
_COUNT_LOCK = threading.Lock()
JITTER: random.Random | None = None
_BODY_DELAYS = random.Random(7)


def _count(effect: str) -> None:
    with _COUNT_LOCK:
        BODY_CALLS[effect] += 1


def _jitter_seconds(scale: float) -> float:
    return 0.0 if JITTER is None else JITTER.random() * scale


@toolreplay.effect("inventory.stock.get")
def stock(sku: int) -> dict[str, JsonValue]:
    _count("inventory.stock.get")
    time.sleep(_BODY_DELAYS.random() * 0.002)  # varied body times, so calls overlap and reorder
    return {"sku": sku, "available": (sku * 37) % 11}


@toolreplay.effect("pricing.quote.get")
async def quote(sku: int) -> dict[str, JsonValue]:
    _count("pricing.quote.get")
    await asyncio.sleep(_BODY_DELAYS.random() * 0.003)  # varied, so tasks interleave
    return {"sku": sku, "price": round(sku * 1.25, 2)}


def checked_stock(sku: int) -> int:
    """What the application does per item on a worker thread."""
    time.sleep(_jitter_seconds(0.001))  # seeded jitter: threads start their calls out of order
    return cast(int, stock(sku)["available"])


def stock_levels_with(pool: ThreadPoolExecutor, skus: range) -> list[int]:
    return list(pool.map(checked_stock, skus))


def stock_levels(count: int = 200) -> list[int]:
    """Runner: 8 worker threads, the session carried by `SessionExecutor`."""
    with toolreplay.SessionExecutor(max_workers=8) as pool:
        return stock_levels_with(pool, range(count))


async def priced(sku: int) -> float:
    await asyncio.sleep(_jitter_seconds(0.002))
    return cast(float, (await quote(sku))["price"])


async def quotes(count: int = 10) -> list[float]:
    """Runner: an asyncio fan-out of `count` quotes."""
    return list(await asyncio.gather(*(priced(sku) for sku in range(count))))


def catalogue() -> dict[str, JsonValue]:
    """Runner for a promoted case: threads and tasks in one run."""
    levels = stock_levels(24)
    prices = asyncio.run(quotes(6))
    return {"levels": list[JsonValue](levels), "prices": list[JsonValue](prices)}
