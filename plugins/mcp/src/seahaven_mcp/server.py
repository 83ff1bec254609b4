"""One world, one instance, one MCP client over stdio.

``serve(world, reset_options=...)`` checks the options, makes the instance, and
answers the client on stdin and stdout until the client leaves (stdin closes) or
the process is told to stop (SIGTERM, SIGHUP, Ctrl-C); the instance is destroyed
either way. Only the world's own tools are offered; MCP resources, prompts and the
control tool are not (``serve(world, scenario="pack/id")`` binds the episode to a
scenario instead, and the server is ``seahaven_mcp.bound``'s). Tools are listed exactly as
``inst.tools()`` lists them; a call's result is its JSON text (and
``structuredContent`` when it is an object); a ``ToolError`` is a result with
``isError`` carrying the error's ``{code, message, details}``.

The SDK's session reads its messages through ``seahaven_mcp.stdio``, which
answers a line that is not a message with JSON-RPC's error and goes on. When the
client closes stdin or a signal arrives, a statement still running is
interrupted (``inst.interrupt()``), so the process ends at once.

While it serves, the process's own standard output (fd 1 and ``sys.stdout``)
points at stderr, so a stray ``print`` in world code cannot corrupt the protocol.
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import Any, BinaryIO

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import Server

import seahaven
from seahaven.errors import WorldBug
from seahaven.scenarios import Trial, find_scenario
from seahaven.stores.storage import runner_storage
from seahaven_mcp.bound import build_bound_server
from seahaven_mcp.calls import call_result, run_call
from seahaven_mcp.options import CONVENIENCE_KEYS, RESET_KEYS, check_reset_options
from seahaven_mcp.stdio import stdio_transport

__all__ = [
    "CONVENIENCE_KEYS",
    "RESET_KEYS",
    "build_server",
    "call_result",
    "check_reset_options",
    "serve",
]

_log = logging.getLogger("seahaven.mcp")

# The largest seed drawn when none is given: any value world.instance() takes.
_SEED_BOUND = 2**63


def _call(
    instance: seahaven.Instance, name: str, arguments: Mapping[str, Any]
) -> types.CallToolResult:
    """Run one call on a worker thread; every outcome is a ``CallToolResult``."""
    return run_call(instance.call, name, arguments)


def build_server(world: seahaven.World, instance: seahaven.Instance) -> Server[Any, Any]:
    """The MCP server of one instance: its tools, named and described by ``world``."""
    listed = [
        types.Tool(
            name=tool["name"], description=tool["description"], inputSchema=tool["input_schema"]
        )
        for tool in instance.tools()
    ]
    server: Server[Any, Any] = Server(
        world.mcp_server_name,
        version=world.version,
        instructions=world.mcp_server_instructions,
    )
    # One call at a time, in the order they arrive; the instance's lock would
    # serialise them anyway, and a worker thread keeps the loop answering pings.
    limiter = anyio.CapacityLimiter(1)

    async def list_tools() -> list[types.Tool]:
        return [tool.model_copy(deep=True) for tool in listed]

    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        result: types.CallToolResult = await anyio.to_thread.run_sync(
            _call, instance, name, arguments, limiter=limiter
        )
        return result

    server.list_tools()(list_tools)  # type: ignore[no-untyped-call]
    # The arguments are the instance's to validate, so a bad one comes back as the
    # framework's invalid_arguments error rather than the SDK's own wording.
    server.call_tool(validate_input=False)(call_tool)
    return server


def serve(
    world: seahaven.World,
    *,
    reset_options: Mapping[str, Any] | None = None,
    scenario: str | None = None,
    seed: int | None = None,
) -> None:
    """Serve ``world`` to one MCP client on this process's stdin and stdout, until it leaves.

    ``reset_options`` are the keyword arguments ``world.instance()`` is called with
    (``RESET_KEYS``). With no ``seed`` one is drawn and written to stderr, so the
    episode can be run again. The instance is made before the first message is
    read, so a fixture or ``setup_sql`` that fails does so here, as the framework's
    own error, and nothing is left behind; it is destroyed when the client closes
    stdin or the process receives SIGTERM, SIGHUP or SIGINT.

    ``scenario`` (``"pack/id"``, of an installed pack) binds the episode to that
    scenario instead (``seahaven_mcp.bound``): it starts where the scenario says,
    so it takes no ``reset_options``; ``seed`` is the trial's seed (drawn when
    ``None``, as above).
    """
    if not isinstance(world, seahaven.World):
        raise WorldBug(f"serve() takes a seahaven.World, not {type(world).__name__}")
    if scenario is not None:
        _serve_scenario(world, scenario, seed, reset_options)
        return
    options = check_reset_options(reset_options)
    if seed is not None:
        if options.get("seed") is not None:
            raise WorldBug("the seed is given twice, as seed= and in reset_options; give it once")
        options["seed"] = seed
    drawn = options.get("seed") is None
    if drawn:
        options["seed"] = secrets.randbelow(_SEED_BOUND)
    # The instance is this process's own: memory unless reset_options or SEAHAVEN_STORAGE
    # name a storage.
    options["storage"] = runner_storage(options.get("storage"))
    instance = world.instance(**options)
    if drawn:
        _say_seed(options["seed"])
    try:
        _serve_stdio(world.name, build_server(world, instance), instance, instance.destroy)
    finally:
        instance.destroy()


def _serve_scenario(
    world: seahaven.World,
    reference: str,
    seed: int | None,
    reset_options: Mapping[str, Any] | None,
) -> None:
    if reset_options:
        raise WorldBug(
            f"scenario {reference!r} sets where its episode starts, so it takes no "
            "reset_options (fixture, now, clock_mode, setup_sql, ...); give the seed alone"
        )
    pack, chosen = find_scenario(reference)
    if chosen.world_name != world.name:
        raise WorldBug(
            f"scenario {reference!r} runs on world {chosen.world_name!r}, not {world.name!r}; "
            f"serve {chosen.world_name}, or leave the world out"
        )
    drawn = seed is None
    trial_seed = secrets.randbelow(_SEED_BOUND) if seed is None else seed
    # The trial's instances are this process's own: memory unless SEAHAVEN_STORAGE says.
    trial = Trial(chosen, seed=trial_seed, world=world)
    if drawn:
        _say_seed(trial_seed)
    try:
        server = build_bound_server(trial, pack)
        _serve_stdio(world.name, server, trial.instance, trial.close)
    finally:
        trial.close()


def _say_seed(seed: int) -> None:
    """Write the drawn seed to stderr; only once the episode exists, so a refusal stays alone."""
    print(
        f"seahaven mcp: seed {seed} (pass --seed {seed} to run this episode again)",
        file=sys.stderr,
        flush=True,
    )


def _serve_stdio(
    label: str,
    server: Server[Any, Any],
    instance: seahaven.Instance,
    release: Callable[[], None],
) -> None:
    """Answer the client on stdin and stdout until it leaves; ``release`` on a signal."""
    if _is_terminal(sys.stdin):
        print(
            f"seahaven mcp: serving {label} to an MCP client on stdin and stdout; start "
            "this command from the client (Ctrl-C stops it)",
            file=sys.stderr,
            flush=True,
        )
    # The SDK warns of every call to a name it has not listed; the instance answers
    # those itself (unknown_tool), so the warning is noise on the operator's stderr.
    logging.getLogger("mcp.server.lowlevel.server").setLevel(logging.ERROR)
    with _protocol_streams() as (protocol_in, protocol_out):
        anyio.run(_run, server, instance, release, protocol_in, protocol_out)


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


@contextmanager
def _protocol_streams() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """Unbuffered byte streams on the real stdin and stdout; fd 1 points at stderr meanwhile.

    The streams are on duplicates of the two descriptors, so closing them leaves
    the process's own stdin and stdout as they were.
    """
    sys.stdout.flush()
    original_stdout = os.dup(1)
    saved_stdout = sys.stdout
    protocol_in = open(os.dup(0), "rb", buffering=0)  # noqa: SIM115
    protocol_out = open(os.dup(1), "wb", buffering=0)  # noqa: SIM115
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield protocol_in, protocol_out
    finally:
        for stream in (protocol_out, protocol_in):
            with suppress(OSError, ValueError):
                stream.close()
        sys.stdout = saved_stdout
        os.dup2(original_stdout, 1)
        os.close(original_stdout)


# How often a statement still running is interrupted while the server stops: a call may
# start its next statement after the last interrupt.
_INTERRUPT_SECONDS = 0.05


async def _run(
    server: Server[Any, Any],
    instance: seahaven.Instance,
    release: Callable[[], None],
    protocol_in: BinaryIO,
    protocol_out: BinaryIO,
) -> None:
    async with (
        stdio_transport(protocol_in, protocol_out) as (read_stream, write_stream, ended),
        anyio.create_task_group() as group,
    ):
        if hasattr(signal, "SIGHUP"):
            group.start_soon(_stop_on_signal, instance, release)
        group.start_soon(_stop_calls_when, ended, instance)
        await server.run(read_stream, write_stream, server.create_initialization_options())
        group.cancel_scope.cancel()


async def _stop_calls_when(ended: anyio.Event, instance: seahaven.Instance) -> None:
    """Once the client has closed stdin, stop the call still running: nobody waits for it.

    Closing stdin is how an MCP client shuts its server down; it waits a moment
    and then sends SIGTERM, so a call left to finish would only delay the end.
    """
    await ended.wait()
    await _keep_interrupting(instance)


async def _keep_interrupting(instance: seahaven.Instance) -> None:
    """Interrupt the instance's statements again and again, until cancelled."""
    while True:
        instance.interrupt()
        await anyio.sleep(_INTERRUPT_SECONDS)


async def _stop_on_signal(instance: seahaven.Instance, release: Callable[[], None]) -> None:
    """On SIGTERM, SIGHUP or SIGINT: stop the running call, destroy the instance, end the process.

    Reading stdin blocks a worker thread that only the client can release, by
    closing the pipe; a signal may come while it is still open, so the process
    exits directly once the instance is gone, with the shell's status for it.
    A statement still running is interrupted first, so the instance (which waits
    for the call in flight) is destroyed at once.
    """
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP, signal.SIGINT) as received:
        async for signum in received:
            async with anyio.create_task_group() as stopping:
                stopping.start_soon(_keep_interrupting, instance)
                await anyio.to_thread.run_sync(release)
                stopping.cancel_scope.cancel()
            _log.warning("stopped by signal %d; the instance is destroyed", signum)
            sys.stderr.flush()
            os._exit(128 + signum)
