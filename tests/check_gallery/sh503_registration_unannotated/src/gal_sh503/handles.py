"""The names ctx.worlds answers to, declared through a base of the package's own."""

import seahaven
from seahaven import Worlds


class BaseWorlds(Worlds):
    pass


class HostWorlds(BaseWorlds):
    vendor: seahaven.WorldHandle
