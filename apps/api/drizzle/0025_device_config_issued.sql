-- The config each device was last sent (issue time, grace, content hash, withdrawn offline codes): a restarted
-- service re-issues only the configs that changed or are due, not every one its devices hold.
ALTER TABLE "lock_devices" ADD COLUMN "config_issued_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "lock_devices" ADD COLUMN "config_grace_seconds" integer;--> statement-breakpoint
ALTER TABLE "lock_devices" ADD COLUMN "config_hash" text;--> statement-breakpoint
ALTER TABLE "lock_devices" ADD COLUMN "config_withdrawn" jsonb;