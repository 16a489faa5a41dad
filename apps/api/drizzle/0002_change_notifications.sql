-- Change notifications for the per-instance access cache (src/lib/access-cache.ts). After every statement
-- that changes sessions, applications or their owners, one NOTIFY on "latchkey_changes" names what changed:
-- "s:<session id>", "a:<application id>", "u:<user id>", comma-separated; more than 100 keys at once
-- (bulk loads) send "*", which drops everything. NOTIFY is delivered at commit, to every instance.
CREATE OR REPLACE FUNCTION "latchkey_notify_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  n integer;
  payload text;
BEGIN
  EXECUTE format('select count(distinct %1$I), string_agg(distinct %2$L || %1$I::text, '','') from changed_rows', TG_ARGV[1], TG_ARGV[0])
    INTO n, payload;
  IF n > 100 THEN
    payload := '*';
  END IF;
  IF n > 0 THEN
    PERFORM pg_notify('latchkey_changes', payload);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "sessions_notify_update" AFTER UPDATE ON "sessions" REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "latchkey_notify_changed"('s:', 'id');
--> statement-breakpoint
CREATE TRIGGER "sessions_notify_delete" AFTER DELETE ON "sessions" REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "latchkey_notify_changed"('s:', 'id');
--> statement-breakpoint
CREATE TRIGGER "applications_notify_update" AFTER UPDATE ON "applications" REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "latchkey_notify_changed"('a:', 'id');
--> statement-breakpoint
CREATE TRIGGER "applications_notify_delete" AFTER DELETE ON "applications" REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "latchkey_notify_changed"('a:', 'id');
--> statement-breakpoint
CREATE TRIGGER "application_owners_notify_insert_a" AFTER INSERT ON "application_owners" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "latchkey_notify_changed"('a:', 'application_id');
--> statement-breakpoint
CREATE TRIGGER "application_owners_notify_insert_u" AFTER INSERT ON "application_owners" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "latchkey_notify_changed"('u:', 'user_id');
--> statement-breakpoint
CREATE TRIGGER "application_owners_notify_update_a" AFTER UPDATE ON "application_owners" REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "latchkey_notify_changed"('a:', 'application_id');
--> statement-breakpoint
CREATE TRIGGER "application_owners_notify_update_u" AFTER UPDATE ON "application_owners" REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "latchkey_notify_changed"('u:', 'user_id');
--> statement-breakpoint
CREATE TRIGGER "application_owners_notify_delete_a" AFTER DELETE ON "application_owners" REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "latchkey_notify_changed"('a:', 'application_id');
--> statement-breakpoint
CREATE TRIGGER "application_owners_notify_delete_u" AFTER DELETE ON "application_owners" REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "latchkey_notify_changed"('u:', 'user_id');
