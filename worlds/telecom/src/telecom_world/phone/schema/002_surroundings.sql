-- Where the phone is (tau2-bench's UserSurroundings): who holds it, whether they are
-- abroad, what the network allows the line (kept in step with the carrier's records
-- after every call), the signal each technology gets here, and the carrier's payment
-- request while one is open.
CREATE TABLE surroundings (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    name TEXT,
    phone_number TEXT,
    is_abroad INTEGER NOT NULL CHECK (is_abroad IN (0, 1)),
    roaming_allowed INTEGER NOT NULL CHECK (roaming_allowed IN (0, 1)),
    mobile_data_usage_exceeded INTEGER NOT NULL CHECK (mobile_data_usage_exceeded IN (0, 1)),
    line_active INTEGER NOT NULL CHECK (line_active IN (0, 1))
) STRICT;

CREATE TABLE signal_strengths (
    technology TEXT PRIMARY KEY CHECK (technology IN ('none', '2G', '3G', '4G', '5G')),
    position INTEGER NOT NULL,
    strength TEXT NOT NULL CHECK (strength IN ('none', 'poor', 'fair', 'good', 'excellent'))
) STRICT;

-- Present while the carrier has asked the user to pay a bill.
CREATE TABLE payment_request (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    bill_id TEXT NOT NULL,
    amount_due REAL NOT NULL,
    paid INTEGER NOT NULL CHECK (paid IN (0, 1))
) STRICT;

-- What the phone reports of itself, worked out from the rows above after every change
-- by the same code the phone's own checks run (tau2-bench's assertion functions read
-- the same things): whether mobile data works, the speed a speed test measures (NULL
-- when it fails) and its description, whether the messaging app can send MMS. Graders
-- read it; no tool writes it directly.
CREATE TABLE diagnostics (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    sim_status TEXT NOT NULL CHECK (sim_status IN ('active', 'missing', 'locked_pin', 'locked_puk')),
    mobile_data_working INTEGER NOT NULL CHECK (mobile_data_working IN (0, 1)),
    speed_mbps REAL,
    speed_description TEXT NOT NULL,
    can_send_mms INTEGER NOT NULL CHECK (can_send_mms IN (0, 1))
) STRICT;
