CREATE TABLE "signing_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"status" text NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"private_key" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"activated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"verify_until" timestamp with time zone,
	"retired_at" timestamp with time zone,
	CONSTRAINT "signing_keys_status_check" CHECK ("signing_keys"."status" in ('active', 'previous', 'retired'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "signing_keys_one_active_idx" ON "signing_keys" USING btree ("status") WHERE "signing_keys"."status" = 'active';