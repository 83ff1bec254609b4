"""The wire format: reading a ``<methodCall>``, writing a ``<methodResponse>``.

Both directions are the standard library's ``xmlrpc.client``, so what this endpoint reads and
writes is what every XML-RPC client reads and writes. The document comes from an agent, so
it is checked before the parser sees it: a size limit, and no document type declaration (an
XML-RPC document has none, and a DTD is where entity expansion attacks live).
"""

from __future__ import annotations

import xmlrpc.client
from typing import Any
from xml.parsers.expat import ExpatError

from seahaven_xmlrpc.faults import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    Fault,
)

__all__ = ["MAX_DOCUMENT_CHARS", "fault_response", "method_response", "parse_call"]

MAX_DOCUMENT_CHARS = 1_000_000
"""The longest ``<methodCall>`` document the endpoint reads."""


def parse_call(document: str) -> tuple[str, tuple[Any, ...]]:
    """The method name and the parameters of a ``<methodCall>`` document, or a ``Fault``."""
    if len(document) > MAX_DOCUMENT_CHARS:
        raise Fault(INVALID_REQUEST, f"the document is longer than {MAX_DOCUMENT_CHARS} characters")
    if "<!DOCTYPE" in document or "<!ENTITY" in document:
        raise Fault(INVALID_REQUEST, "an XML-RPC document has no DOCTYPE or ENTITY declarations")
    try:
        params, method = xmlrpc.client.loads(document, use_builtin_types=True)
    except (ExpatError, UnicodeError) as error:
        raise Fault(PARSE_ERROR, f"the document is not well-formed XML: {error}") from None
    except (ValueError, TypeError, IndexError, KeyError, xmlrpc.client.Error) as error:
        # The parser found tags XML-RPC does not have, or values that do not parse.
        raise Fault(INVALID_REQUEST, f"not an XML-RPC methodCall: {error}") from None
    if not method:
        raise Fault(INVALID_REQUEST, "not an XML-RPC methodCall: it names no methodName")
    return str(method), tuple(params)


def method_response(value: Any) -> str:
    """A ``<methodResponse>`` carrying ``value``, or a ``Fault`` when XML-RPC cannot carry it."""
    try:
        return xmlrpc.client.dumps((value,), methodresponse=True, allow_none=True)
    except (TypeError, OverflowError) as error:
        raise Fault(
            INTERNAL_ERROR, f"the method's result cannot be sent as XML-RPC: {error}"
        ) from None


def fault_response(fault: Fault) -> str:
    """A ``<methodResponse>`` carrying the fault."""
    return xmlrpc.client.dumps(
        xmlrpc.client.Fault(fault.fault_code, fault.fault_string), methodresponse=True
    )
