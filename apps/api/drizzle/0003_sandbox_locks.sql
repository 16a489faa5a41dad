CREATE TABLE "lock_activity" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "lock_activity_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"lock_id" uuid NOT NULL,
	"application_id" uuid NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"type" text NOT NULL,
	"actor_user_id" uuid,
	"actor_email" text,
	"actor_display_name" text,
	"subject" text,
	"rejected" boolean DEFAULT false NOT NULL,
	"reason" text
);
--> statement-breakpoint
CREATE TABLE "lock_shares" (
	"lock_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"role" text DEFAULT 'USER' NOT NULL,
	"starts_at" timestamp with time zone,
	"ends_at" timestamp with time zone,
	"time_window" jsonb,
	"invite_expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "lock_shares_lock_id_user_id_pk" PRIMARY KEY("lock_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "locks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"application_id" uuid NOT NULL,
	"name" text NOT NULL,
	"colour" text,
	"unlock_time" integer DEFAULT 5 NOT NULL,
	"usage_requirements" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"unlocked_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sent_emails" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"application_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"to" text NOT NULL,
	"subject" text NOT NULL,
	"html" text NOT NULL,
	"text" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "server_secrets" (
	"name" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "used_operation_ids" (
	"id" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "lock_activity" ADD CONSTRAINT "lock_activity_lock_id_locks_id_fk" FOREIGN KEY ("lock_id") REFERENCES "public"."locks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lock_shares" ADD CONSTRAINT "lock_shares_lock_id_locks_id_fk" FOREIGN KEY ("lock_id") REFERENCES "public"."locks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lock_shares" ADD CONSTRAINT "lock_shares_user_id_application_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."application_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "locks" ADD CONSTRAINT "locks_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sent_emails" ADD CONSTRAINT "sent_emails_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "lock_activity_page_idx" ON "lock_activity" USING btree ("lock_id","at","seq");--> statement-breakpoint
CREATE INDEX "lock_shares_user_id_idx" ON "lock_shares" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "locks_application_id_idx" ON "locks" USING btree ("application_id","created_at");--> statement-breakpoint
CREATE INDEX "sent_emails_application_idx" ON "sent_emails" USING btree ("application_id","created_at");--> statement-breakpoint
CREATE INDEX "used_operation_ids_expires_at_idx" ON "used_operation_ids" USING btree ("expires_at");--> statement-breakpoint
-- Live updates of the sandbox (modules/locks' event stream): one NOTIFY on "latchkey_locks" per changed
-- row, delivered at commit to every instance, payload "<application id> <lock id> <what> [<row id>]" with
-- <what> one of activity (a new log entry), lock (state, name or settings changed, or removed), share.
CREATE OR REPLACE FUNCTION "latchkey_notify_lock"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
  IF TG_TABLE_NAME = 'lock_activity' THEN
    PERFORM pg_notify('latchkey_locks', r.application_id || ' ' || r.lock_id || ' activity ' || r.id);
  ELSIF TG_TABLE_NAME = 'locks' THEN
    PERFORM pg_notify('latchkey_locks', r.application_id || ' ' || r.id || ' lock');
  ELSE
    PERFORM pg_notify('latchkey_locks', coalesce((select l.application_id::text from locks l where l.id = r.lock_id), '-') || ' ' || r.lock_id || ' share ' || r.user_id);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "lock_activity_notify_insert" AFTER INSERT ON "lock_activity" FOR EACH ROW EXECUTE FUNCTION "latchkey_notify_lock"();
--> statement-breakpoint
CREATE TRIGGER "locks_notify_change" AFTER INSERT OR UPDATE OR DELETE ON "locks" FOR EACH ROW EXECUTE FUNCTION "latchkey_notify_lock"();
--> statement-breakpoint
CREATE TRIGGER "lock_shares_notify_change" AFTER INSERT OR UPDATE OR DELETE ON "lock_shares" FOR EACH ROW EXECUTE FUNCTION "latchkey_notify_lock"();
