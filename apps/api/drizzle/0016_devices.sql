CREATE TABLE "lock_devices" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"lock_id" uuid NOT NULL,
	"code_hash" text,
	"code_expires_at" timestamp with time zone,
	"provisioned_at" timestamp with time zone,
	"certificate_serial" text,
	"certificate_not_after" timestamp with time zone,
	"connected" boolean DEFAULT false NOT NULL,
	"last_seen" timestamp with time zone,
	"firmware" text,
	"state" jsonb,
	"config_version" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "revoked_device_certificates" (
	"serial" text PRIMARY KEY NOT NULL,
	"device_id" uuid NOT NULL,
	"revoked_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "lock_devices" ADD CONSTRAINT "lock_devices_lock_id_locks_id_fk" FOREIGN KEY ("lock_id") REFERENCES "public"."locks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "lock_devices_lock_id_idx" ON "lock_devices" USING btree ("lock_id");--> statement-breakpoint
CREATE INDEX "lock_devices_code_hash_idx" ON "lock_devices" USING btree ("code_hash");