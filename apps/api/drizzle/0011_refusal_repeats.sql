ALTER TABLE "lock_activity" ADD COLUMN "repeats" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
-- pg-boss 12 keeps its queue in schema pgboss_v12 (it cannot migrate the schema pg-boss 10 made, pgboss).
-- Deliveries already handed to the old queue and not finished are owed again, so the relay hands them to
-- the new one; an old instance still working the old queue during the roll may deliver one of them too,
-- with the same webhook-id (at least once). Nothing on a fresh database.
UPDATE "webhook_deliveries" SET "relay_after" = now() WHERE "relay_after" IS NULL AND "status" IN ('pending', 'retrying');
