ALTER TABLE "lock_devices" ADD COLUMN "presence_announced" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "lock_devices" ADD COLUMN "presence_changed_at" timestamp with time zone;--> statement-breakpoint
-- What was announced so far is what the devices were: no device is announced again for the new column.
UPDATE "lock_devices" SET "presence_announced" = "connected";
