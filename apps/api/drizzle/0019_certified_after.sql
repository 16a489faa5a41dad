ALTER TABLE "users" ADD COLUMN "certified_after" timestamp with time zone;--> statement-breakpoint
-- A user's earlier certificates were ended (certified_after moved on): the applications they own hear of it
-- on "latchkey_changes" (src/lib/access-cache.ts), so every instance publishes their locks' device configs
-- again, whose owner entries carry the new certifiedAfter. More than 100 applications send "*".
CREATE OR REPLACE FUNCTION "latchkey_notify_certified_after"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  n integer;
  payload text;
BEGIN
  SELECT count(*), string_agg('a:' || o.application_id::text, ',') INTO n, payload FROM application_owners o WHERE o.user_id = NEW.id;
  IF n > 100 THEN
    payload := '*';
  ELSE
    payload := concat_ws(',', payload, 'u:' || NEW.id::text);
  END IF;
  PERFORM pg_notify('latchkey_changes', payload);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "users_notify_certified_after" AFTER UPDATE OF "certified_after" ON "users" FOR EACH ROW WHEN (OLD."certified_after" IS DISTINCT FROM NEW."certified_after") EXECUTE FUNCTION "latchkey_notify_certified_after"();
