"""The committed generator of the retail world's fixture, ``initial``: tau2-bench's database.

It reads the benchmark's ``retail/db.json`` (see ``source.py`` for where) and
loads it, row by row, into a blank instance on a fixed clock, then freezes it,
so a rebuild writes the same bytes. Run from ``worlds/retail``, as a module so
that it finds ``fixtures_src``::

    python -m fixtures_src.generate

``tables(db)`` is the mapping itself (the benchmark's nested JSON to this
world's tables), kept separate so that anything holding a database in the
benchmark's layout (the differential benchmark holds tau2's own, after an
episode) can be compared with an instance table by table.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import retail_world
from retail_world.store import ADDRESS

import seahaven
import seahaven.toolkit
from fixtures_src.source import tau2_data

__all__ = ["COLUMNS", "FIXTURES", "NOW", "SEED", "build", "load_db", "main", "tables"]

NOW = "2024-05-15T20:00:00.000Z"
"""Where the fixture's clock stands. The store's tools never read it; it is the airline's
"now" (2024-05-15 15:00 EST), tau2-bench's only date. Never move it."""

SEED = 0
"""The seed of the build; the store draws nothing from it."""

FIXTURES = {
    "initial": (
        "tau2-bench's retail database as the benchmark ships it: 50 product types with 591 "
        "items, 500 customers with their saved payment methods, and 1,000 orders (pending, "
        "processed, delivered and cancelled) with their items, shipments and payments. Every "
        "retail task starts here."
    ),
}

COLUMNS: dict[str, tuple[str, ...]] = {
    "products": ("product_id", "name", "position"),
    "variants": ("item_id", "product_id", "options", "available", "price", "position"),
    "users": ("user_id", "first_name", "last_name", *ADDRESS, "email", "orders", "position"),
    "payment_methods": ("user_id", "id", "source", "brand", "last_four", "balance", "position"),
    "orders": (
        "order_id",
        "user_id",
        *ADDRESS,
        "status",
        "fulfillments",
        "cancel_reason",
        "exchange_items",
        "exchange_new_items",
        "exchange_payment_method_id",
        "exchange_price_difference",
        "return_items",
        "return_payment_method_id",
    ),
    "order_items": ("order_id", "position", "name", "product_id", "item_id", "price", "options"),
    "order_payments": ("order_id", "position", "transaction_type", "amount", "payment_method_id"),
}
"""Each table's columns, in the order ``tables`` gives their values."""


def _json(value: Any) -> str:
    """JSON as the tools write it: compact, in the order given."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _json_or_none(value: Any) -> str | None:
    return None if value is None else _json(value)


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


def _product_rows(db: dict[str, Any]) -> Iterator[tuple[str, tuple[Any, ...]]]:
    for position, (product_id, product) in enumerate(db["products"].items()):
        if product_id != product["product_id"]:
            raise ValueError(f"product {product_id!r} is filed under another id")
        yield "products", (product_id, product["name"], position)
        for index, (item_id, variant) in enumerate(product["variants"].items()):
            if item_id != variant["item_id"]:
                raise ValueError(f"item {item_id!r} is filed under another id")
            yield (
                "variants",
                (
                    item_id,
                    product_id,
                    _json(variant["options"]),
                    int(bool(variant["available"])),
                    float(variant["price"]),
                    index,
                ),
            )


def _user_rows(db: dict[str, Any]) -> Iterator[tuple[str, tuple[Any, ...]]]:
    for position, (user_id, user) in enumerate(db["users"].items()):
        if user_id != user["user_id"]:
            raise ValueError(f"user {user_id!r} is filed under another id")
        yield (
            "users",
            (
                user_id,
                user["name"]["first_name"],
                user["name"]["last_name"],
                *(user["address"][column] for column in ADDRESS),
                user["email"],
                _json(user["orders"]),
                position,
            ),
        )
        for index, (key, method) in enumerate(user["payment_methods"].items()):
            if key != method["id"]:
                raise ValueError(f"payment method {key!r} of {user_id!r} is filed under another id")
            yield (
                "payment_methods",
                (
                    user_id,
                    key,
                    method["source"],
                    method.get("brand"),
                    method.get("last_four"),
                    _float_or_none(method.get("balance")),
                    index,
                ),
            )


def _order_rows(db: dict[str, Any]) -> Iterator[tuple[str, tuple[Any, ...]]]:
    for order_id, order in db["orders"].items():
        if order_id != order["order_id"]:
            raise ValueError(f"order {order_id!r} is filed under another id")
        yield (
            "orders",
            (
                order_id,
                order["user_id"],
                *(order["address"][column] for column in ADDRESS),
                order["status"],
                _json(order["fulfillments"]),
                order.get("cancel_reason"),
                _json_or_none(order.get("exchange_items")),
                _json_or_none(order.get("exchange_new_items")),
                order.get("exchange_payment_method_id"),
                _float_or_none(order.get("exchange_price_difference")),
                _json_or_none(order.get("return_items")),
                order.get("return_payment_method_id"),
            ),
        )
        for position, item in enumerate(order["items"]):
            yield (
                "order_items",
                (
                    order_id,
                    position,
                    item["name"],
                    item["product_id"],
                    item["item_id"],
                    float(item["price"]),
                    _json(item["options"]),
                ),
            )
        for position, payment in enumerate(order["payment_history"]):
            yield (
                "order_payments",
                (
                    order_id,
                    position,
                    payment["transaction_type"],
                    float(payment["amount"]),
                    payment["payment_method_id"],
                ),
            )


def tables(db: dict[str, Any]) -> dict[str, list[tuple[Any, ...]]]:
    """The benchmark's database (``db.json``'s layout) as this world's rows, table by table."""
    found: dict[str, list[tuple[Any, ...]]] = {table: [] for table in COLUMNS}
    for source in (_product_rows, _user_rows, _order_rows):
        for table, row in source(db):
            found[table].append(row)
    return found


def load_db(path: Path | None = None) -> dict[str, Any]:
    """The benchmark's ``db.json``; a ``WorldBug`` saying where to put it when it is missing."""
    folder = path if path is not None else tau2_data("retail")
    if folder is None:
        raise seahaven.WorldBug(
            "tau2-bench's data is not here: set SEAHAVEN_TAU2_DATA to the folder holding "
            "retail/db.json (the project keeps it in shared/data/tau2)"
        )
    loaded: dict[str, Any] = json.loads((folder / "db.json").read_text(encoding="utf-8"))
    return loaded


def fill(inst: seahaven.Instance, db: dict[str, Any]) -> None:
    """Load the benchmark's database into an instance, in one bulk block."""
    with inst.bulk() as loading:
        for table, rows in tables(db).items():
            columns = COLUMNS[table]
            loading.db.executemany(
                f"INSERT INTO {table} ({', '.join(columns)})"
                f" VALUES ({', '.join('?' for _ in columns)})",
                rows,
            )


def build(
    fixture_id: str,
    *,
    world: seahaven.World = retail_world.world,
    source: Path | None = None,
) -> seahaven.Fixture:
    """Freeze ``fixture_id`` into ``world.fixtures_dir`` from a blank instance.

    Pass ``world=copy.copy(world)`` pointed at another directory to build
    somewhere else, as the rebuild test does, and ``source`` to read the
    benchmark's data from another folder.
    """
    if fixture_id not in FIXTURES:
        raise seahaven.WorldBug(
            f"the generator has no fixture {fixture_id!r}; it builds {', '.join(FIXTURES)}"
        )
    db = load_db(source)
    with world.instance(now=NOW, clock_mode="fixed", seed=SEED) as inst:
        fill(inst, db)
        return inst.freeze(fixture_id, FIXTURES[fixture_id])


def main(argv: list[str]) -> int:
    """Rebuild the named fixtures (all of them when none is named)."""
    return seahaven.toolkit.rebuild_fixtures(
        retail_world.world,
        build,
        list(FIXTURES),
        argv,
        into=Path(retail_world.__file__).parent / "fixtures",
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
