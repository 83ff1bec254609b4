"""The process's call slots: they bound calls in flight, queue the rest fairly, drop none.

Every test that resizes the slots restores them, through the ``resize`` fixture.
The slots' own ``waiting()`` count is read only to know when a thread has
queued, so the tests synchronise on facts rather than on sleeps.
"""

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import seahaven
from seahaven.calls import concurrency

TIMEOUT = 10.0


@pytest.fixture
def resize() -> Iterator[Callable[[int], None]]:
    """``set_concurrency`` for the length of one test, with the size put back afterwards."""
    original = concurrency.concurrency()
    try:
        yield concurrency.set_concurrency
    finally:
        concurrency.set_concurrency(original)


def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Poll ``condition`` until it holds, failing the test if it never does."""
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.002)


def queued() -> int:
    """How many calls wait for a call slot."""
    return concurrency.call_slots().waiting()


class Worker:
    """A daemon thread that keeps what its function returned or raised."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self.thread.start()

    def _run(self, fn: Callable[[], Any]) -> None:
        try:
            self.result = fn()
        except BaseException as error:
            self.error = error

    def join(self) -> Any:
        """Wait for the thread; return its result or raise its error."""
        self.thread.join(TIMEOUT)
        assert not self.thread.is_alive(), "the call never finished (a deadlock?)"
        if self.error is not None:
            raise self.error
        return self.result


# --- a world whose tools can be held open, and one that nests --------------------------------

gates: dict[str, threading.Event] = {}
inside = {"now": 0, "most": 0}
inside_lock = threading.Lock()
served: list[str] = []

world = seahaven.World(
    name="gated",
    version="1.0.0",
    schema="CREATE TABLE marks (id INTEGER PRIMARY KEY, who TEXT NOT NULL);",
    state_format="seahaven.state/1",
)


@world.tool
def hold(ctx: seahaven.Ctx, key: str) -> str:
    """Stay inside the call until the test opens ``key``."""
    with inside_lock:
        inside["now"] += 1
        inside["most"] = max(inside["most"], inside["now"])
    try:
        if not gates.setdefault(key, threading.Event()).wait(TIMEOUT):
            raise RuntimeError(f"{key} was never released")
        return key
    finally:
        with inside_lock:
            inside["now"] -= 1


@world.tool
def mark(ctx: seahaven.Ctx, who: str) -> None:
    """Note the order calls were served in."""
    served.append(who)
    ctx.db.execute("INSERT INTO marks (who) VALUES (?)", who)


@world.tool
def ping(ctx: seahaven.Ctx) -> int:
    """The cheapest call there is."""
    return 1


child = seahaven.World(
    name="child",
    version="1.0.0",
    schema="CREATE TABLE hits (id INTEGER PRIMARY KEY, n INTEGER NOT NULL);",
    state_format="seahaven.state/1",
)


@child.tool
def hit(ctx: seahaven.Ctx, n: int) -> int:
    """Write a row in the added world."""
    ctx.db.execute("INSERT INTO hits (n) VALUES (?)", n)
    return n


parent = seahaven.World(
    name="parent",
    version="1.0.0",
    schema="CREATE TABLE calls (id INTEGER PRIMARY KEY);",
    state_format="seahaven.state/1",
)
parent.add_world(child, name="child", tool_prefix="child_")


@parent.tool
def nest(ctx: seahaven.Ctx, n: int) -> int:
    """Call the added world from inside a call."""
    ctx.db.execute("INSERT INTO calls DEFAULT VALUES")
    return int(ctx.worlds.child.call("hit", n=n))


@pytest.fixture(autouse=True)
def fresh_tools() -> Iterator[None]:
    """Start each test with no held calls, and release any a failed test left held."""
    gates.clear()
    served.clear()
    inside.update(now=0, most=0)
    yield
    for event in gates.values():
        event.set()


def release(key: str) -> None:
    """Let every ``hold`` call waiting on ``key`` return."""
    gates.setdefault(key, threading.Event()).set()


def hold_slot(inst: seahaven.Instance, key: str) -> Worker:
    """Start a call that holds its call slot until ``release(key)``."""
    before = inside["now"]
    worker = Worker(lambda: inst.call("hold", key=key))
    wait_until(lambda: inside["now"] > before, f"{key} is inside its call")
    return worker


# --- size ----------------------------------------------------------------------------------


def test_the_default_follows_cpu_affinity_capped_at_sixteen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert concurrency.default_concurrency() == min(len(os.sched_getaffinity(0)), 16)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(40)), raising=False)
    assert concurrency.default_concurrency() == 16
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3, 5}, raising=False)
    assert concurrency.default_concurrency() == 2
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert concurrency.default_concurrency() == 16


def test_a_fresh_process_starts_with_the_default_slots() -> None:
    code = (
        "from seahaven import concurrency; "
        "print(concurrency.concurrency(), concurrency.default_concurrency())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    assert out[0] == out[1] != "0"


@pytest.mark.parametrize("size", [-1, 1.5, "2", True, None])
def test_a_bad_size_is_refused(resize: Callable[[int], None], size: Any) -> None:
    before = concurrency.concurrency()
    with pytest.raises(seahaven.WorldBug, match="whole number"):
        resize(size)
    assert concurrency.concurrency() == before


def test_resizing_reports_the_new_size_and_zero_removes_the_slots(
    resize: Callable[[int], None],
) -> None:
    resize(3)
    assert concurrency.concurrency() == 3
    resize(0)
    assert concurrency.concurrency() == 0
    instances_ = [world.instance() for _ in range(6)]
    try:
        workers = [hold_slot(inst, f"free{n}") for n, inst in enumerate(instances_)]
        assert inside["now"] == 6  # with no call slots, all six are in at once
        for n in range(6):
            release(f"free{n}")
        assert [worker.join() for worker in workers] == [f"free{n}" for n in range(6)]
    finally:
        for inst in instances_:
            inst.destroy()


# --- bounding, queueing, never rejecting ---------------------------------------------------


def test_the_call_slots_bound_calls_in_flight_and_queues_the_rest(
    resize: Callable[[int], None],
) -> None:
    resize(2)
    instances_ = [world.instance() for _ in range(5)]
    try:
        workers = [Worker(lambda inst=inst: inst.call("hold", key="all")) for inst in instances_]
        wait_until(lambda: inside["now"] == 2 and queued() == 3, "two run and three queue")
        time.sleep(0.05)
        assert inside["now"] == 2
        release("all")
        assert [worker.join() for worker in workers] == ["all"] * 5  # nothing was rejected
        assert inside["most"] == 2
        assert queued() == 0
    finally:
        for inst in instances_:
            inst.destroy()


def test_more_call_slots_let_queued_calls_in(resize: Callable[[int], None]) -> None:
    resize(1)
    instances_ = [world.instance() for _ in range(3)]
    try:
        workers = [Worker(lambda inst=inst: inst.call("hold", key="grow")) for inst in instances_]
        wait_until(lambda: inside["now"] == 1 and queued() == 2, "one runs and two queue")
        resize(3)
        wait_until(lambda: inside["now"] == 3, "all three are in")
        release("grow")
        for worker in workers:
            worker.join()
    finally:
        for inst in instances_:
            inst.destroy()


def test_removing_the_call_slots_lets_every_queued_call_in(resize: Callable[[int], None]) -> None:
    resize(1)
    instances_ = [world.instance() for _ in range(3)]
    try:
        workers = [Worker(lambda inst=inst: inst.call("hold", key="drop")) for inst in instances_]
        wait_until(lambda: queued() == 2, "two queue")
        resize(0)
        wait_until(lambda: inside["now"] == 3, "all three are in")
        release("drop")
        for worker in workers:
            worker.join()
        # Putting slots back afterwards starts with none in use.
        resize(1)
        assert instances_[0].call("ping") == 1
    finally:
        for inst in instances_:
            inst.destroy()


# --- what takes no call slot -----------------------------------------------------------------


def test_a_nested_call_takes_no_second_call_slot(resize: Callable[[int], None]) -> None:
    resize(1)
    with parent.instance() as inst:
        # The outer call holds the only slot; a nested call that queued would wait forever.
        assert Worker(lambda: inst.call("nest", n=4)).join() == 4
        assert [(record.i, record.world) for record in inst.change_log()] == [
            (0, "child"),
            (0, "main"),
        ]


def test_bulk_and_a_call_inside_it_take_no_call_slot(resize: Callable[[int], None]) -> None:
    resize(1)
    with world.instance() as busy, world.instance() as inst:
        holder = hold_slot(busy, "busy")
        assert queued() == 0

        def load() -> list[Any]:
            with inst.bulk() as ctx:
                ctx.db.execute("INSERT INTO marks (who) VALUES ('bulk')")
                inst.call("mark", who="inside bulk")
            return [row["who"] for row in inst.inspect().rows("SELECT who FROM marks ORDER BY id")]

        # The only slot is taken for the whole block, and the block still finishes.
        assert Worker(load).join() == ["bulk", "inside bulk"]
        assert inside["now"] == 1
        release("busy")
        holder.join()


def test_creation_listing_and_reading_take_no_call_slot(resize: Callable[[int], None]) -> None:
    resize(1)
    with world.instance() as busy:
        holder = hold_slot(busy, "busy")

        def everything_but_a_call() -> int:
            with world.instance() as inst:
                inst.tools()
                inst.state()
                inst.inspect().rows("SELECT * FROM marks")
                return inst.call_count

        assert Worker(everything_but_a_call).join() == 0
        release("busy")
        holder.join()


def test_a_queued_call_does_not_block_destroying_its_instance(
    resize: Callable[[int], None],
) -> None:
    resize(1)
    with world.instance() as busy:
        holder = hold_slot(busy, "busy")
        doomed = world.instance()
        queued_call = Worker(lambda: doomed.call("ping"))
        wait_until(lambda: queued() == 1, "the call queues")
        # The queued call has not taken the instance lock, so destroy does not wait for it.
        Worker(doomed.destroy).join()
        release("busy")
        holder.join()
        with pytest.raises(seahaven.WorldBug, match="destroyed"):
            queued_call.join()


# --- fairness -------------------------------------------------------------------------------


def test_queued_calls_are_served_first_come_first_served(resize: Callable[[int], None]) -> None:
    resize(1)
    names = [f"caller{n}" for n in range(6)]
    with world.instance() as busy:
        targets = {name: world.instance() for name in names}
        try:
            holder = hold_slot(busy, "busy")
            callers = []
            for position, name in enumerate(names, start=1):
                inst = targets[name]
                callers.append(Worker(lambda inst=inst, name=name: inst.call("mark", who=name)))
                wait_until(lambda position=position: queued() == position, f"{name} queues")
            release("busy")
            holder.join()
            for caller in callers:
                caller.join()
            assert served == names
        finally:
            for inst in targets.values():
                inst.destroy()


def test_no_thread_starves_when_many_share_few_slots(resize: Callable[[int], None]) -> None:
    # Eight threads loop calls through two call slots for a fixed time. Slots
    # that let a releasing thread barge back in would serve a few threads
    # thousands of times and the rest hardly at all; a fair one keeps turns.
    resize(2)
    threads = 8
    instances_ = [world.instance() for _ in range(threads)]
    counts = [0] * threads
    start = threading.Barrier(threads)
    stop_at: list[float] = []

    def loop(slot: int) -> None:
        inst = instances_[slot]
        start.wait(TIMEOUT)
        if slot == 0:
            stop_at.append(time.monotonic() + 0.6)
        wait_until(lambda: bool(stop_at), "the clock starts")
        while time.monotonic() < stop_at[0]:
            inst.call("ping")
            counts[slot] += 1

    try:
        workers = [Worker(lambda slot=slot: loop(slot)) for slot in range(threads)]
        for worker in workers:
            worker.join()
    finally:
        for inst in instances_:
            inst.destroy()
    # Turns stay even to within what OS scheduling on a busy machine adds (a
    # thread that is late to queue again misses its turn); starvation looks
    # like thousands to one.
    assert min(counts) > 0
    assert max(counts) <= 3 * min(counts), counts


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        concurrency.no_such_name  # noqa: B018
