-- The people who work at the company. Nobody is ever removed: offboarding marks
-- a person inactive and dates it, because invoices, expenses and approvals keep
-- pointing at them.
CREATE TABLE staff (
    id TEXT PRIMARY KEY,
    full_name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    -- What the person may do in the back office; see company_world.access.
    role TEXT NOT NULL CHECK (role IN ('admin', 'finance', 'hr', 'employee')),
    department TEXT NOT NULL CHECK (
        department IN ('executive', 'engineering', 'finance', 'people', 'sales', 'support')
    ),
    manager_id TEXT REFERENCES staff (id),
    -- The person's account in the chat store. Another store, so no foreign key.
    chat_user_id TEXT NOT NULL UNIQUE,
    -- The bank account (ba_...) in the payments store that reimbursements are paid to.
    reimbursement_bank_account_id TEXT,
    status TEXT NOT NULL CHECK (status IN ('active', 'inactive')),
    -- Calendar dates, YYYY-MM-DD; timestamps are written by the tools from the instance clock.
    start_date TEXT NOT NULL,
    end_date TEXT,
    created_at TEXT NOT NULL,
    CHECK ((status = 'inactive') = (end_date IS NOT NULL)),
    CHECK (manager_id IS NULL OR manager_id != id)
) STRICT;

CREATE INDEX staff_by_name ON staff (full_name, id);
CREATE INDEX staff_by_manager ON staff (manager_id);
