-- The carrier's plans and the devices it knows, each in the benchmark's order
-- (``position``), which its lookups follow.
CREATE TABLE plans (
    plan_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    data_limit_gb REAL NOT NULL,
    price_per_month REAL NOT NULL,
    data_refueling_price_per_gb REAL NOT NULL,
    position INTEGER NOT NULL
) STRICT;

CREATE TABLE devices (
    device_id TEXT PRIMARY KEY,
    device_type TEXT NOT NULL CHECK (device_type IN ('phone', 'router', 'tablet', 'watch', 'other')),
    model TEXT NOT NULL,
    imei TEXT,
    is_esim_capable INTEGER NOT NULL CHECK (is_esim_capable IN (0, 1)),
    activated INTEGER NOT NULL CHECK (activated IN (0, 1)),
    -- UTC instants; shown to the agent in the benchmark's EST wall time.
    activation_date TEXT,
    last_esim_transfer_date TEXT,
    position INTEGER NOT NULL
) STRICT;
