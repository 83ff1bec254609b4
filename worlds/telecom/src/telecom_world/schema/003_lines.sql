-- Phone and data lines: their status, plan, device, the data used and refuelled in
-- the current billing cycle, roaming, and the dates of their contract's events.
CREATE TABLE lines (
    line_id TEXT PRIMARY KEY,
    phone_number TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('Active', 'Suspended', 'Pending Activation', 'Closed')),
    plan_id TEXT NOT NULL,
    device_id TEXT,
    data_used_gb REAL NOT NULL,
    data_refueling_gb REAL NOT NULL,
    roaming_enabled INTEGER NOT NULL CHECK (roaming_enabled IN (0, 1)),
    contract_end_date TEXT,
    last_plan_change_date TEXT,
    last_sim_replacement_date TEXT,
    suspension_start_date TEXT,
    position INTEGER NOT NULL
) STRICT;
