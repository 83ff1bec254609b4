"""Chat: a team-chat workspace for agents to work in.

People, public and private channels, memberships, messages with threads and
reactions, and full-text search, stored in SQLite. The agent acts as one member
of the workspace (see ``chat_world.startup``). The package publishes ``world``,
found through the ``seahaven.worlds`` entry point under the name ``chat``.

Importing the subpackages registers everything: ``middleware`` holds the error
handler (the only middleware, so it is outermost), ``tools`` every tool, and
``startup`` the acting-user hook.
"""

from chat_world import middleware, startup, tools
from chat_world.world import world

__all__ = ["middleware", "startup", "tools", "world"]
