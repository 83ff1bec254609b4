"""The fault codes, and the exception a failed call raises to become a fault document.

The negative codes are the ones XML-RPC servers agree on for failures of the protocol itself
(a document that is not XML, a method nobody serves, parameters that do not fit), so a client
library that knows them treats them as such. A failure of the product behind the endpoint is
an application fault, unless the world maps its own error codes to numbers of its choosing.
"""

from __future__ import annotations

from dataclasses import dataclass

import seahaven

__all__ = [
    "APPLICATION_ERROR",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "CallLogEntry",
    "Fault",
]

PARSE_ERROR = -32700
"""The document is not well-formed XML, or not text an XML parser can read."""
INVALID_REQUEST = -32600
"""Well-formed XML, but not an XML-RPC ``<methodCall>``."""
METHOD_NOT_FOUND = -32601
"""The ``<methodName>`` names no method this endpoint serves."""
INVALID_PARAMS = -32602
"""The ``<params>`` do not fit the method: too many, too few, or of the wrong types."""
INTERNAL_ERROR = -32603
"""The endpoint failed in a way the caller cannot fix."""
APPLICATION_ERROR = -32500
"""The method ran and the product refused: its own error, with its code in the fault string."""


@dataclass(frozen=True)
class CallLogEntry:
    """A call-log row waiting to be written: the table, and what the row records."""

    table: str
    method: str | None
    client: str | None


class Fault(seahaven.ToolError):
    """A failed XML-RPC call, raised by the tool so that its transaction rolls back.

    ``render_faults`` turns it into a ``<methodResponse><fault>`` document above the
    transaction, and writes ``call_log`` there when the endpoint keeps a call log.
    """

    def __init__(
        self,
        fault_code: int,
        fault_string: str,
        *,
        call_log: CallLogEntry | None = None,
    ) -> None:
        super().__init__("xmlrpc_fault", fault_string, {"fault_code": fault_code})
        self.fault_code = fault_code
        self.fault_string = fault_string
        self.call_log = call_log
