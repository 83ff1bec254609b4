"""Loans: lend a book."""

import seahaven
from gal_sh210.world import world


@world.tool
def lend_book(ctx: seahaven.Ctx, title: str) -> str:
    """Lend the book with this title and return the loan's id.

    Args:
        title: The title of the book, as its spine reads.
    """
    loan = ctx.ids.uuid()
    ctx.db.execute("INSERT INTO loans (id, title) VALUES (?, ?)", loan, title)
    return loan
