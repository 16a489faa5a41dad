ALTER TABLE "sent_emails" ALTER COLUMN "application_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "sent_emails" ADD COLUMN "user_id" uuid;--> statement-breakpoint
ALTER TABLE "tiles" ADD COLUMN "name" text;--> statement-breakpoint
ALTER TABLE "sent_emails" ADD CONSTRAINT "sent_emails_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sent_emails_user_idx" ON "sent_emails" USING btree ("user_id","created_at");--> statement-breakpoint
ALTER TABLE "sent_emails" ADD CONSTRAINT "sent_emails_reader_check" CHECK ("sent_emails"."application_id" is not null or "sent_emails"."user_id" is not null);