"""Writes a solution never makes, found by making them: the collateral and destructive extras.

Which tools write, and which only read, is never guessed from their names: each
tool is **made**, with arguments from the start's rows (``candidates.py``), on
an instance at the start, and its change log says. That probe is a function of
the start alone (made afresh with ``PROBE_SEED``, whatever the scenario's seed),
so a ``Workbench`` keeps it for every scenario with the same start (a pack's
scenarios share a fixture and a principal or two), and a scenario's panel is the
same whatever ran before it.

A scenario then takes the tools that wrote at the start, ranks those writing
inside the tables its solution changes first (where a loose allowance is
likeliest), fills their arguments from its own start's rows (none the task
names), and plays them, one at a time, after its solution: an extra is kept when
it still writes there and touches no row the solution changes and no row the
task names. The calls that only read are the ``extra-reads`` of the benign variant.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from seahaven.declaration.world import World
from seahaven.errors import WorldBug
from seahaven.evaluation.candidates import StartRows, ToolShape, arguments_for
from seahaven.evaluation.stage import Outcome, Stage, Workbench
from seahaven.grading.fold import NetChange, row_id
from seahaven.instance.instance import Instance
from seahaven.instance.snapshots import Snapshot
from seahaven.scenarios.model import Start, ToolCall
from seahaven.stores.changelog import LogRecord

__all__ = [
    "MAX_PROBE_CALLS",
    "Probe",
    "Probed",
    "extra_kind",
    "names_word",
    "probe_start",
    "start_key",
    "tables_of",
]

# How many calls the probe of one start makes at most: every tool of a world of 70 once, and
# again, with other arguments, for those the world refused the first time.
MAX_PROBE_CALLS = 160


@dataclass(frozen=True)
class Probed:
    """A tool the probe saw write at the start: the tables it changed, and whether it deleted."""

    tool: str
    tables: frozenset[tuple[str, str]]
    deletes: bool


@dataclass
class Probe:
    """What making every tool at one start showed: the tools that wrote, and the calls that read."""

    writes: list[Probed] = field(default_factory=list)
    reads: list[ToolCall] = field(default_factory=list)
    calls: int = 0

    def ranked(self, near: Collection[tuple[str, str]]) -> list[Probed]:
        """The tools to try as extras: those writing inside the tables in ``near`` first.

        A tool whose every table is one the solution changes comes first (an
        allowance there is the likeliest to be loose), then by the share of its
        tables outside them; ties keep the probe's seeded order.
        """
        inside = set(near)
        return sorted(
            self.writes, key=lambda probed: len(probed.tables - inside) / len(probed.tables)
        )


def start_key(image: Snapshot) -> str:
    """A digest of a start's stores: two starts with the same key hold the same rows."""
    digest = hashlib.blake2b(digest_size=16)
    for store in image.stores:
        digest.update(hashlib.blake2b(store.image, digest_size=16).digest())
    return digest.hexdigest()


# The seed the probe's start is made with, whatever the scenario's: the probe is then one for
# every scenario with the same start, and the same whichever of them asks first.
PROBE_SEED = 0


def probe_start(
    world: World, start: Start, tools: Mapping[str, ToolShape], bench: Workbench
) -> Probe:
    """Make every tool once at ``start`` (twice for those refused), noting what each did.

    The start is made afresh with ``PROBE_SEED``; each call is made on it as it
    was (restored from its snapshot after every call that wrote).
    """
    options = start.instance_options(seed=PROBE_SEED)
    rng = random.Random(f"extras:{json.dumps(options, sort_keys=True, default=str)}")
    made = world.instance(**options)
    try:
        rows = StartRows.read(made)
        today = made.clock.iso()[:10]
        try:
            image: Snapshot | None = made.snapshot()
        except WorldBug:
            image = None  # its ctx.state cannot be copied: each write starts afresh below
    finally:
        made.destroy()
    order = sorted(tools)
    rng.shuffle(order)
    options_of = {
        name: arguments_for(tools[name], rows, rng, avoid=set(), today=today) for name in order
    }
    probe = Probe()
    owned: list[Instance] = []

    def fresh() -> Instance:
        if image is not None:
            return bench.instance_at(image, world)
        instance = world.instance(**options)
        owned.append(instance)
        return instance

    instance = fresh()
    refused: list[str] = []
    try:
        for attempt in (0, 1):
            for name in order if attempt == 0 else refused:
                if probe.calls >= MAX_PROBE_CALLS or len(options_of[name]) <= attempt:
                    continue
                probe.calls += 1
                call = ToolCall(tool=name, arguments=options_of[name][attempt])
                outcome = Stage.call(instance, call)
                if outcome.refused is not None or outcome.crashed is not None:
                    if attempt == 0:
                        refused.append(name)
                    if outcome.crashed is None:
                        continue
                elif not outcome.wrote:
                    probe.reads.append(call)
                    continue
                else:
                    probe.writes.append(
                        Probed(
                            name,
                            frozenset((r.world, r.table) for r in outcome.records),
                            any(record.op == "delete" for record in outcome.records),
                        )
                    )
                # Back to the start before the next call: each is made on the start as it was.
                instance = fresh()
    finally:
        for instance in owned:
            instance.destroy()
    return probe


def extra_kind(
    tool: ToolShape, outcome: Outcome, solution_rows: Collection[object], named: str
) -> str | None:
    """``collateral`` or ``destructive`` for an unrelated write; ``None`` for any other call.

    A write that changes a row the solution changes, or a row whose key the
    task names (its instructions or its grader), is not unrelated.
    """
    if not outcome.wrote or outcome.refused is not None or outcome.crashed is not None:
        return None
    for record in outcome.records:
        if row_id(record.world, record.table, record.key) in solution_rows:
            return None
        if _names(record, named):
            return None
    deletes = any(record.op == "delete" for record in outcome.records)
    return "destructive" if (tool.destructive or deletes) else "collateral"


def _names(record: LogRecord, named: str) -> bool:
    """Whether the task's text names a value of the row's key, as a word of its own."""
    return any(
        isinstance(value, str) and names_word(named, value.casefold())
        for value in record.key.values()
    )


def _word(character: str) -> bool:
    # What a regular expression's \w matches in text: a letter, a digit, or an underscore.
    return character.isalnum() or character == "_"


def names_word(text: str, value: str) -> bool:
    r"""Whether ``text`` holds ``value`` as a word of its own (``o1``, not inside ``co1d``).

    As ``re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text)`` finds, without a
    pattern made (and cached) for each of the thousands of values a start's rows hold.
    """
    start = text.find(value)
    while start != -1:
        end = start + len(value)
        before = start == 0 or not _word(text[start - 1])
        if before and (end == len(text) or not _word(text[end])):
            return True
        start = text.find(value, start + 1)
    return False


def tables_of(changes: Iterable[NetChange]) -> set[tuple[str, str]]:
    """The ``(store, table)`` pairs of net changes."""
    return {(change.world, change.table) for change in changes}
