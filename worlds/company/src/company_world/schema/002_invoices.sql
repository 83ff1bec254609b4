-- Invoices to customers. Every invoice is collected by card the moment it is
-- issued, through the payments account of its currency: usd through the company's
-- own account, eur through the European entity's. An invoice whose card was
-- refused is still filed, as payment_failed, so it can be retried.
CREATE TABLE invoices (
    id TEXT PRIMARY KEY,
    -- INV-0001, INV-0002, ...: what people quote in chat and on the phone.
    number TEXT NOT NULL UNIQUE,
    customer_email TEXT NOT NULL,
    customer_name TEXT,
    -- The customer (cus_...) in the payments store of this invoice's currency.
    payments_customer_id TEXT NOT NULL,
    -- In the currency's minor unit (cents).
    amount INTEGER NOT NULL CHECK (amount > 0),
    currency TEXT NOT NULL CHECK (currency IN ('usd', 'eur')),
    description TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('paid', 'payment_failed', 'refunded')),
    -- The latest charge (ch_...) made to collect it, failed or not.
    charge_id TEXT NOT NULL,
    failure_code TEXT,
    failure_message TEXT,
    refund_id TEXT,
    -- The message (in the chat store) that announced it in #billing.
    announcement_message_id TEXT,
    issued_by TEXT NOT NULL REFERENCES staff (id),
    issued_at TEXT NOT NULL,
    -- YYYY-MM-DD: when the customer owes the money by, should the card fail.
    due_date TEXT NOT NULL,
    paid_at TEXT,
    refunded_at TEXT,
    CHECK ((status = 'payment_failed') = (failure_code IS NOT NULL)),
    CHECK ((status = 'payment_failed') = (paid_at IS NULL)),
    CHECK ((status = 'refunded') = (refund_id IS NOT NULL)),
    CHECK ((status = 'refunded') = (refunded_at IS NOT NULL))
) STRICT;

CREATE INDEX invoices_newest_first ON invoices (issued_at, id);
CREATE INDEX invoices_by_status ON invoices (status, issued_at, id);
CREATE INDEX invoices_by_customer ON invoices (customer_email, issued_at, id);
