CREATE TABLE "lock_user_settings" (
	"lock_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"alias" text,
	"favourite" boolean DEFAULT false NOT NULL,
	"colour" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "lock_user_settings_lock_id_user_id_pk" PRIMARY KEY("lock_id","user_id")
);
--> statement-breakpoint
ALTER TABLE "locks" ADD COLUMN "permitted_addresses" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "locks" ADD COLUMN "hidden" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "lock_user_settings" ADD CONSTRAINT "lock_user_settings_lock_id_locks_id_fk" FOREIGN KEY ("lock_id") REFERENCES "public"."locks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "lock_user_settings_user_id_idx" ON "lock_user_settings" USING btree ("user_id");