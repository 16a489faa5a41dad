-- Certificates issued before this migration name only CN=<deviceId>: false, so a clustered broker still admits
-- them while they are the device's current one (modules/broker-auth).
ALTER TABLE "lock_devices" ADD COLUMN "certificate_subject_serial" boolean DEFAULT false NOT NULL;
