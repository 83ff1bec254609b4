"""The names ctx.worlds answers to, for a type checker."""

import seahaven


class CleanWorlds(seahaven.Worlds):
    vendor: seahaven.WorldHandle
    _scratch: int
