"""The names ctx.worlds answers to, for a type checker."""

import seahaven


class HostWorlds(seahaven.Worlds):
    vendor: seahaven.WorldHandle
    ledger: seahaven.WorldHandle
    _cache: dict[str, str]
