CREATE TABLE "application_users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"application_id" uuid NOT NULL,
	"sub" text,
	"email" text,
	"display_name" text,
	"status" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone,
	CONSTRAINT "application_users_status_check" CHECK (("application_users"."status" = 'active' and "application_users"."sub" is not null) or ("application_users"."status" = 'pending' and "application_users"."sub" is null and "application_users"."email" is not null))
);
--> statement-breakpoint
ALTER TABLE "application_users" ADD CONSTRAINT "application_users_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "application_users_sub_key" ON "application_users" USING btree ("application_id","sub");--> statement-breakpoint
CREATE UNIQUE INDEX "application_users_pending_email_key" ON "application_users" USING btree ("application_id",lower("email")) WHERE "application_users"."sub" is null;--> statement-breakpoint
CREATE INDEX "application_users_page_idx" ON "application_users" USING btree ("application_id","created_at","id");