-- Expenses staff paid out of pocket, and the decisions on them. Amounts are in
-- cents of the company's home currency, usd, which is what reimbursements pay.
CREATE TABLE expenses (
    id TEXT PRIMARY KEY,
    -- Whose money it was: the person reimbursed.
    staff_id TEXT NOT NULL REFERENCES staff (id),
    -- Who filed it: the same person, or finance filing on their behalf.
    submitted_by TEXT NOT NULL REFERENCES staff (id),
    amount INTEGER NOT NULL CHECK (amount > 0),
    currency TEXT NOT NULL CHECK (currency = 'usd'),
    category TEXT NOT NULL CHECK (
        category IN ('travel', 'meals', 'equipment', 'software', 'training', 'office', 'other')
    ),
    description TEXT NOT NULL,
    -- YYYY-MM-DD: when the money was spent.
    incurred_on TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('submitted', 'reimbursed', 'rejected')),
    -- The payout (po_...) in the payments store that reimbursed it.
    payout_id TEXT,
    submitted_at TEXT NOT NULL,
    decided_at TEXT,
    CHECK ((status = 'reimbursed') = (payout_id IS NOT NULL)),
    CHECK ((status = 'submitted') = (decided_at IS NULL))
) STRICT;

CREATE INDEX expenses_newest_first ON expenses (submitted_at, id);
CREATE INDEX expenses_by_staff ON expenses (staff_id, submitted_at, id);

-- Who approved or rejected which expense, when, and why. An expense is decided once.
CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    expense_id TEXT NOT NULL UNIQUE REFERENCES expenses (id),
    decided_by TEXT NOT NULL REFERENCES staff (id),
    decision TEXT NOT NULL CHECK (decision IN ('approved', 'rejected')),
    note TEXT,
    decided_at TEXT NOT NULL
) STRICT;
