"""The benchmarks' ten-call company episode: a realistic episode on the ``acme`` fixture's rows.

Two calls write (an invoice charged through the payments store and announced in
chat, an expense approved); the other eight read real rows across the four
stores. ``benchmarks/scenarios.py`` grades it; ``benchmarks/serving.py`` serves
it (``--load company``).
"""

from __future__ import annotations

from typing import Any

FIXTURE = "acme"
PRINCIPAL = {"principal": "tom@acme-robotics.test"}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("whoami", {}),
    (
        "invoice_customer",
        {
            "customer_email": "ap@cyberdyne.test",
            "customer_name": "Cyberdyne Systems",
            "amount": 275000,
            "description": "Arm calibration, May",
            "card_token": "tok_visa",
        },
    ),
    ("list_invoices", {"limit": 5}),
    ("list_expenses", {"status": "submitted", "limit": 2}),
    ("approve_expense", {"expense_id": "exp_6dd14a2859404c61", "note": "Receipt checked"}),
    ("list_staff", {}),
    ("chat_list_channels", {}),
    ("chat_search_messages", {"query": "invoice"}),
    ("pay_get_balance", {}),
    ("get_company_summary", {}),
]

# The calls of the ten that change a row: a solution written to solve the task makes just these.
WRITING_TOOLS = {"invoice_customer", "approve_expense"}
WRITES = [(tool, arguments) for tool, arguments in CALLS if tool in WRITING_TOOLS]
