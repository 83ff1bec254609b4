-- The customer's phone (tau2-bench's MockPhoneAttributes): one row of settings and
-- radio state, its active APN settings, the VPN connection's details while there is
-- one, and the apps whose permissions matter to a call. Booleans are 0 or 1.
CREATE TABLE device (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    sim_card_status TEXT NOT NULL
        CHECK (sim_card_status IN ('active', 'missing', 'locked_pin', 'locked_puk')),
    sim_card_missing INTEGER NOT NULL CHECK (sim_card_missing IN (0, 1)),
    airplane_mode INTEGER NOT NULL CHECK (airplane_mode IN (0, 1)),
    network_signal_strength TEXT NOT NULL
        CHECK (network_signal_strength IN ('none', 'poor', 'fair', 'good', 'excellent')),
    network_technology_connected TEXT NOT NULL
        CHECK (network_technology_connected IN ('none', '2G', '3G', '4G', '5G')),
    network_connection_status TEXT NOT NULL
        CHECK (network_connection_status IN ('connected', 'searching', 'no_service', 'emergency_only')),
    battery_level INTEGER NOT NULL,
    data_enabled INTEGER NOT NULL CHECK (data_enabled IN (0, 1)),
    roaming_enabled INTEGER NOT NULL CHECK (roaming_enabled IN (0, 1)),
    network_mode_preference TEXT NOT NULL
        CHECK (network_mode_preference IN ('4g_5g_preferred', '4g_only', '3g_only', '2g_only')),
    wifi_enabled INTEGER NOT NULL CHECK (wifi_enabled IN (0, 1)),
    wifi_connected INTEGER NOT NULL CHECK (wifi_connected IN (0, 1)),
    wifi_ssid TEXT,
    wifi_signal_strength TEXT NOT NULL
        CHECK (wifi_signal_strength IN ('none', 'poor', 'fair', 'good', 'excellent')),
    wifi_calling_enabled INTEGER NOT NULL CHECK (wifi_calling_enabled IN (0, 1)),
    wifi_calling_mms_over_wifi INTEGER NOT NULL CHECK (wifi_calling_mms_over_wifi IN (0, 1)),
    data_saver_mode INTEGER NOT NULL CHECK (data_saver_mode IN (0, 1)),
    vpn_enabled_setting INTEGER NOT NULL CHECK (vpn_enabled_setting IN (0, 1)),
    vpn_connected INTEGER NOT NULL CHECK (vpn_connected IN (0, 1))
) STRICT;

CREATE TABLE apn_settings (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    apn_name TEXT NOT NULL CHECK (apn_name IN ('internet', 'broken')),
    reset_at_reboot INTEGER NOT NULL CHECK (reset_at_reboot IN (0, 1)),
    mms_apn TEXT,
    mmsc_url TEXT,
    mms_proxy TEXT,
    mms_port INTEGER
) STRICT;

-- Present while the phone has VPN details (tau2-bench's vpn_details is not None).
CREATE TABLE vpn_details (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    server_address TEXT,
    protocol TEXT,
    server_performance TEXT NOT NULL
        CHECK (server_performance IN ('unknown', 'poor', 'fair', 'good', 'excellent'))
) STRICT;

-- The apps the phone tracks, in the phone's order, and the permissions each holds.
CREATE TABLE apps (
    app_name TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    sms INTEGER NOT NULL CHECK (sms IN (0, 1)),
    storage INTEGER NOT NULL CHECK (storage IN (0, 1)),
    phone INTEGER NOT NULL CHECK (phone IN (0, 1)),
    network INTEGER NOT NULL CHECK (network IN (0, 1))
) STRICT;
