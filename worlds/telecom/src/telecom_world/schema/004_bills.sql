-- Bills and their line items (charges positive, credits negative, in dollars), each
-- item numbered by its position on the bill.
CREATE TABLE bills (
    bill_id TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL,
    period_start TEXT NOT NULL,
    period_end TEXT NOT NULL,
    issue_date TEXT NOT NULL,
    total_due REAL NOT NULL,
    due_date TEXT NOT NULL,
    status TEXT NOT NULL
        CHECK (status IN ('Draft', 'Issued', 'Awaiting Payment', 'Paid', 'Overdue', 'Disputed')),
    position INTEGER NOT NULL
) STRICT;

CREATE TABLE bill_line_items (
    bill_id TEXT NOT NULL REFERENCES bills (bill_id),
    position INTEGER NOT NULL,
    description TEXT NOT NULL,
    amount REAL NOT NULL,
    date TEXT NOT NULL,
    item_type TEXT NOT NULL,
    PRIMARY KEY (bill_id, position)
) STRICT;
