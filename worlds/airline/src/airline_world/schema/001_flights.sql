-- The airline's timetable: each flight once, and what it is on each date it flies.
-- `position` keeps the benchmark's order of flights, which searches list in.
CREATE TABLE flights (
    flight_number TEXT PRIMARY KEY,
    origin TEXT NOT NULL,
    destination TEXT NOT NULL,
    -- Local times of day, as HH:MM:SS; an arrival the next day ends in "+1".
    scheduled_departure_time_est TEXT NOT NULL,
    scheduled_arrival_time_est TEXT NOT NULL,
    position INTEGER NOT NULL UNIQUE
) STRICT;

-- One row per flight and date. Seats and prices exist only while the flight is
-- `available`; the instants of the other statuses are stored as UTC instants and
-- shown to the agent in the benchmark's EST wall time.
CREATE TABLE flight_dates (
    flight_number TEXT NOT NULL REFERENCES flights (flight_number),
    date TEXT NOT NULL,
    status TEXT NOT NULL
        CHECK (status IN ('available', 'on time', 'delayed', 'flying', 'landed', 'cancelled')),
    seats_basic_economy INTEGER,
    seats_economy INTEGER,
    seats_business INTEGER,
    price_basic_economy INTEGER,
    price_economy INTEGER,
    price_business INTEGER,
    estimated_departure_at TEXT,
    estimated_arrival_at TEXT,
    actual_departure_at TEXT,
    actual_arrival_at TEXT,
    PRIMARY KEY (flight_number, date),
    CHECK ((status = 'available') = (seats_basic_economy IS NOT NULL AND seats_economy IS NOT NULL
        AND seats_business IS NOT NULL AND price_basic_economy IS NOT NULL
        AND price_economy IS NOT NULL AND price_business IS NOT NULL))
) STRICT;
