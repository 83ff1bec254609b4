"""What happens when an instance starts: the chat integration is connected, and the principal set.

The company's hooks run before those of the worlds it adds, with every store's
transaction already open, which is what lets the first one prepare the chat
store for the chat world's own hook. Rows written here are starting state,
not the agent's work, so they are not in the change log.
"""

from __future__ import annotations

from chat_world.errors import NotFound as ChatNotFound
from chat_world.tools.users import create_user, lookup_user_by_handle

import seahaven
from company_world.access import PRINCIPAL_KEY
from company_world.world import CHAT_INTEGRATION_HANDLE, CompanyWorlds, world

__all__ = ["connect_chat", "set_principal"]


@world.instance_startup
def connect_chat(ctx: seahaven.Ctx[CompanyWorlds]) -> None:
    """Make sure the back office has its own account in the chat workspace.

    The chat world is started as ``@backoffice`` (bound in ``world.py``), so the
    account must exist before the chat world's hook looks for it. Every fixture
    already has it; a blank instance gets it here, through the chat world's own
    tool. In a workspace with no accounts yet, that makes it the workspace's owner,
    as a company whose chat was set up by its back office would have it.
    """
    chat = ctx.worlds.chat
    try:
        chat.call(lookup_user_by_handle, handle=CHAT_INTEGRATION_HANDLE)
    except ChatNotFound:
        chat.call(
            create_user,
            handle=CHAT_INTEGRATION_HANDLE,
            display_name="Back Office",
            title="Company back-office integration",
            role="admin",
        )


@world.instance_startup
def set_principal(ctx: seahaven.Ctx[CompanyWorlds], *, principal: str | None = None) -> None:
    """Set who the agent acts as: ``principal`` is a staff id (emp_...) or email.

    Left out, the agent acts as the company's first administrator, looked up on
    every call. Naming someone the company does not employ, or someone who has
    left, is the author's mistake, and the instance is refused.
    """
    if principal is None:
        ctx.state[PRINCIPAL_KEY] = None
        return
    if not isinstance(principal, str) or not principal.strip():
        raise seahaven.WorldBug(
            f"startup principal must be a staff id (emp_...) or an email, not {principal!r}"
        )
    wanted = principal.strip()
    row = ctx.db.one(
        "SELECT id, status FROM staff WHERE id = ? OR email = ? COLLATE NOCASE", wanted, wanted
    )
    if row is None:
        raise seahaven.WorldBug(
            f"startup principal {principal!r} is not on the company's staff; name a staff id or "
            "email from the fixture (list_staff shows them)"
        )
    if row["status"] != "active":
        raise seahaven.WorldBug(
            f"startup principal {principal!r} has left the company (status {row['status']}); "
            "name someone still on staff"
        )
    ctx.state[PRINCIPAL_KEY] = str(row["id"])
