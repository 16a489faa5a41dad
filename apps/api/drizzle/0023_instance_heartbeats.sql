CREATE TABLE "device_connections" (
	"device_id" uuid PRIMARY KEY NOT NULL,
	"instance_id" text NOT NULL,
	"since" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "instance_heartbeats" (
	"instance_id" text PRIMARY KEY NOT NULL,
	"last_seen" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "device_connections" ADD CONSTRAINT "device_connections_device_id_lock_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."lock_devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "device_connections_instance_idx" ON "device_connections" USING btree ("instance_id");