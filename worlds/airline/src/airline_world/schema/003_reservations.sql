-- Reservations, with their flights, passengers and payments as rows of their own,
-- each numbered by its position in the reservation's list: changing a flight,
-- renaming a passenger or paying a fee is a change to that one row.
CREATE TABLE reservations (
    reservation_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    origin TEXT NOT NULL,
    destination TEXT NOT NULL,
    flight_type TEXT NOT NULL CHECK (flight_type IN ('round_trip', 'one_way')),
    cabin TEXT NOT NULL CHECK (cabin IN ('business', 'economy', 'basic_economy')),
    -- A UTC instant; shown to the agent in the benchmark's EST wall time.
    created_at TEXT NOT NULL,
    total_baggages INTEGER NOT NULL,
    nonfree_baggages INTEGER NOT NULL,
    insurance TEXT NOT NULL CHECK (insurance IN ('yes', 'no')),
    status TEXT CHECK (status IS NULL OR status = 'cancelled')
) STRICT;

CREATE TABLE reservation_flights (
    reservation_id TEXT NOT NULL REFERENCES reservations (reservation_id),
    position INTEGER NOT NULL,
    flight_number TEXT NOT NULL,
    origin TEXT NOT NULL,
    destination TEXT NOT NULL,
    date TEXT NOT NULL,
    price INTEGER NOT NULL,
    PRIMARY KEY (reservation_id, position)
) STRICT;

CREATE TABLE reservation_passengers (
    reservation_id TEXT NOT NULL REFERENCES reservations (reservation_id),
    position INTEGER NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    dob TEXT NOT NULL,
    PRIMARY KEY (reservation_id, position)
) STRICT;

-- Payments are positive, refunds negative, in whole dollars.
CREATE TABLE reservation_payments (
    reservation_id TEXT NOT NULL REFERENCES reservations (reservation_id),
    position INTEGER NOT NULL,
    payment_id TEXT NOT NULL,
    amount INTEGER NOT NULL,
    PRIMARY KEY (reservation_id, position)
) STRICT;
