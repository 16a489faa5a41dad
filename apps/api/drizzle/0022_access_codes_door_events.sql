CREATE TABLE "access_codes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"lock_id" uuid NOT NULL,
	"application_id" uuid NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"sealed_code" text NOT NULL,
	"starts_at" timestamp with time zone,
	"ends_at" timestamp with time zone,
	"config_version" integer,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"withdrawn_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "lock_activity" ADD COLUMN "method" text;--> statement-breakpoint
ALTER TABLE "lock_activity" ADD COLUMN "access_code_id" uuid;--> statement-breakpoint
ALTER TABLE "lock_activity" ADD COLUMN "source" text DEFAULT 'platform' NOT NULL;--> statement-breakpoint
ALTER TABLE "lock_activity" ADD COLUMN "offline" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "lock_activity" ADD COLUMN "event_id" uuid;--> statement-breakpoint
ALTER TABLE "lock_activity" ADD COLUMN "device_seq" bigint;--> statement-breakpoint
ALTER TABLE "lock_activity" ADD COLUMN "value" integer;--> statement-breakpoint
ALTER TABLE "lock_devices" ADD COLUMN "config_acked_version" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "lock_devices" ADD COLUMN "offline_code_secret" text;--> statement-breakpoint
ALTER TABLE "lock_devices" ADD COLUMN "certificate_public_key" text;--> statement-breakpoint
ALTER TABLE "lock_devices" ADD COLUMN "event_seq" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "lock_devices" ADD COLUMN "event_hash" text;--> statement-breakpoint
ALTER TABLE "locks" ADD COLUMN "offline_grace_seconds" integer DEFAULT 604800 NOT NULL;--> statement-breakpoint
ALTER TABLE "locks" ADD COLUMN "door_state" text;--> statement-breakpoint
ALTER TABLE "locks" ADD COLUMN "battery" integer;--> statement-breakpoint
ALTER TABLE "locks" ADD COLUMN "alarms" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "access_codes" ADD CONSTRAINT "access_codes_lock_id_locks_id_fk" FOREIGN KEY ("lock_id") REFERENCES "public"."locks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "access_codes_lock_id_idx" ON "access_codes" USING btree ("lock_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "lock_activity_event_id_idx" ON "lock_activity" USING btree ("event_id") WHERE event_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "lock_activity_application_idx" ON "lock_activity" USING btree ("application_id","at","seq");