"""The catalogue: the product types, a product's items, one item."""

from __future__ import annotations

import json
from typing import Annotated

from pydantic import Field

import seahaven
from retail_world import store
from retail_world.models import Product, Variant
from retail_world.world import world

__all__ = ["get_item_details", "get_product_details", "list_all_product_types"]


@world.tool
def list_all_product_types(ctx: seahaven.Ctx) -> str:
    """Every product type the store sells (there are 50), as a JSON object mapping each
    product's name to its product id, sorted by name. Each product has items: its variants,
    each with an item id of its own and options."""
    names = {
        row["name"]: row["product_id"]
        for row in ctx.db.rows("SELECT name, product_id FROM products ORDER BY position")
    }
    # The benchmark's exact text: Python's JSON with its default separators, keys sorted.
    return json.dumps(names, sort_keys=True)


@world.tool
def get_product_details(
    ctx: seahaven.Ctx,
    product_id: Annotated[
        str,
        Field(description="The product id, such as '6086499569'. A product id is not an item id."),
    ],
) -> Product:
    """A product: its name and every item (variant) with its options, stock and price.

    Errors: NOT_FOUND for an unknown product.
    """
    return store.product_model(ctx, store.product(ctx, product_id))


@world.tool
def get_item_details(
    ctx: seahaven.Ctx,
    item_id: Annotated[
        str,
        Field(description="The item id, such as '6086499569'. An item id is not a product id."),
    ],
) -> Variant:
    """One item: its options, whether it is in stock, and its price.

    Errors: NOT_FOUND for an unknown item.
    """
    return store.variant_model(store.item(ctx, item_id))
