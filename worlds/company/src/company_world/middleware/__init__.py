"""The company's middleware, registered in import order: the error handler outermost, then the gate.

Both wrap every call the agent makes, the added worlds' tools included: a call
to ``pay_create_charge`` descends the company's chain first, then the payments
world's own. Calls the company's tools make through ``ctx.worlds`` run only the
added world's chain, because the company's is already around the tool making them.
"""

# isort: off
from company_world.middleware import error_handler
from company_world.middleware import gate

# isort: on

__all__ = ["error_handler", "gate"]
