-- Issue 19's budget, the history entry's own costs (docs/performance.md, decision 0008). Measured on PGlite,
-- the entry's INSERT was two thirds of what recording adds to an update; this cuts what it did not need:
-- * the foreign key to applications, checked by a query per entry. Every writer holds the application's
--   row already (the history trigger is updating it; recordChange takes it FOR KEY SHARE), and the purge
--   trigger below deletes an application's history with it, as the cascade did;
-- * the index on `id`, which nothing looks up: the table is keyed by its place in the application's
--   timeline (application_id, at, seq), the index every read uses, which replaces the paging index;
-- * the lookup of subscribed webhooks on every change: `applications.update_subscribers` counts them,
--   kept by a trigger on `webhooks` (an increment, so concurrent adds and removals cannot lose a count);
-- * and a change of one kind (a save) is written with INSERT … VALUES.
-- The three tables are locked first, together: running instances take them in differing orders, and
-- taking one after another (around the index build) could deadlock with one of them (docs/deploy.md).
LOCK TABLE "applications", "webhooks", "application_changes" IN ACCESS EXCLUSIVE MODE;--> statement-breakpoint
ALTER TABLE "application_changes" DROP CONSTRAINT "application_changes_application_id_applications_id_fk";--> statement-breakpoint
DROP INDEX "application_changes_page_idx";--> statement-breakpoint
ALTER TABLE "application_changes" DROP CONSTRAINT "application_changes_pkey";--> statement-breakpoint
ALTER TABLE "application_changes" ADD CONSTRAINT "application_changes_pkey" PRIMARY KEY("application_id","at","seq");--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "update_subscribers" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Before the row goes, so before the foreign keys' cascades (into webhooks among them): a relay holding
-- owed entries of this application while it waits for a webhook the cascade has locked would deadlock
-- with a purge that ran after the cascades.
CREATE FUNCTION "latchkey_application_history_purge"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM application_changes WHERE application_id = OLD.id;
  RETURN OLD;
END
$$;--> statement-breakpoint
CREATE TRIGGER "applications_history_purge" BEFORE DELETE ON "applications" FOR EACH ROW EXECUTE FUNCTION "latchkey_application_history_purge"();--> statement-breakpoint
CREATE FUNCTION "latchkey_count_update_subscribers"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  was integer := 0;
  now_ integer := 0;
BEGIN
  IF TG_OP <> 'INSERT' AND OLD.events ? 'application.updated' THEN was := 1; END IF;
  IF TG_OP <> 'DELETE' AND NEW.events ? 'application.updated' THEN now_ := 1; END IF;
  IF TG_OP = 'UPDATE' AND OLD.application_id IS DISTINCT FROM NEW.application_id THEN
    UPDATE applications SET update_subscribers = update_subscribers - was WHERE id = OLD.application_id AND was = 1;
    UPDATE applications SET update_subscribers = update_subscribers + now_ WHERE id = NEW.application_id AND now_ = 1;
  ELSIF now_ <> was THEN
    UPDATE applications SET update_subscribers = update_subscribers + now_ - was WHERE id = COALESCE(NEW.application_id, OLD.application_id);
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "webhooks_count_update_subscribers" AFTER INSERT OR DELETE OR UPDATE OF "events", "application_id" ON "webhooks" FOR EACH ROW EXECUTE FUNCTION "latchkey_count_update_subscribers"();--> statement-breakpoint
UPDATE "applications" a SET "update_subscribers" = (SELECT count(*) FROM "webhooks" w WHERE w.application_id = a.id AND w.events ? 'application.updated') WHERE EXISTS (SELECT 1 FROM "webhooks" w WHERE w.application_id = a.id AND w.events ? 'application.updated');--> statement-breakpoint
-- The history trigger of 0009, reading the count instead of looking the webhooks up.
CREATE OR REPLACE FUNCTION "latchkey_application_history"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  details jsonb := '[]';
  urls jsonb := '[]';
  logo jsonb := '[]';
  branding jsonb := '[]';
  entries jsonb := '[]';
  announce jsonb;
BEGIN
  IF (NEW.name, NEW.company_name, NEW.mailing_address) IS DISTINCT FROM (OLD.name, OLD.company_name, OLD.mailing_address) THEN
    IF NEW.name IS DISTINCT FROM OLD.name THEN
      details := details || jsonb_build_object('field', 'name', 'before', to_jsonb(OLD.name), 'after', to_jsonb(NEW.name));
    END IF;
    IF NEW.company_name IS DISTINCT FROM OLD.company_name THEN
      details := details || jsonb_build_object('field', 'companyName', 'before', to_jsonb(OLD.company_name), 'after', to_jsonb(NEW.company_name));
    END IF;
    IF NEW.mailing_address IS DISTINCT FROM OLD.mailing_address THEN
      details := details || jsonb_build_object('field', 'mailingAddress', 'before', to_jsonb(OLD.mailing_address), 'after', to_jsonb(NEW.mailing_address));
    END IF;
  END IF;
  IF (NEW.privacy_policy, NEW.support_contact, NEW.app_link) IS DISTINCT FROM (OLD.privacy_policy, OLD.support_contact, OLD.app_link) THEN
    IF NEW.privacy_policy IS DISTINCT FROM OLD.privacy_policy THEN
      urls := urls || jsonb_build_object('field', 'privacyPolicy', 'before', to_jsonb(OLD.privacy_policy), 'after', to_jsonb(NEW.privacy_policy));
    END IF;
    IF NEW.support_contact IS DISTINCT FROM OLD.support_contact THEN
      urls := urls || jsonb_build_object('field', 'supportContact', 'before', to_jsonb(OLD.support_contact), 'after', to_jsonb(NEW.support_contact));
    END IF;
    IF NEW.app_link IS DISTINCT FROM OLD.app_link THEN
      urls := urls || jsonb_build_object('field', 'appLink', 'before', to_jsonb(OLD.app_link), 'after', to_jsonb(NEW.app_link));
    END IF;
  END IF;
  IF NEW.logo_url IS DISTINCT FROM OLD.logo_url THEN
    logo := logo || jsonb_build_object('field', 'logoUrl', 'before', to_jsonb(OLD.logo_url), 'after', to_jsonb(NEW.logo_url));
  END IF;
  IF (NEW.sender_email, NEW.sender_name, NEW.primary_colour, NEW.secondary_colour, NEW.only_send_essential_emails, NEW.call_to_action) IS DISTINCT FROM (OLD.sender_email, OLD.sender_name, OLD.primary_colour, OLD.secondary_colour, OLD.only_send_essential_emails, OLD.call_to_action) THEN
    IF NEW.sender_email IS DISTINCT FROM OLD.sender_email THEN
      branding := branding || jsonb_build_object('field', 'emailPreferences.senderEmail', 'before', to_jsonb(OLD.sender_email), 'after', to_jsonb(NEW.sender_email));
    END IF;
    IF NEW.sender_name IS DISTINCT FROM OLD.sender_name THEN
      branding := branding || jsonb_build_object('field', 'emailPreferences.senderName', 'before', to_jsonb(OLD.sender_name), 'after', to_jsonb(NEW.sender_name));
    END IF;
    IF NEW.primary_colour IS DISTINCT FROM OLD.primary_colour THEN
      branding := branding || jsonb_build_object('field', 'emailPreferences.primaryColour', 'before', to_jsonb(OLD.primary_colour), 'after', to_jsonb(NEW.primary_colour));
    END IF;
    IF NEW.secondary_colour IS DISTINCT FROM OLD.secondary_colour THEN
      branding := branding || jsonb_build_object('field', 'emailPreferences.secondaryColour', 'before', to_jsonb(OLD.secondary_colour), 'after', to_jsonb(NEW.secondary_colour));
    END IF;
    IF NEW.only_send_essential_emails IS DISTINCT FROM OLD.only_send_essential_emails THEN
      branding := branding || jsonb_build_object('field', 'emailPreferences.onlySendEssentialEmails', 'before', to_jsonb(OLD.only_send_essential_emails), 'after', to_jsonb(NEW.only_send_essential_emails));
    END IF;
    IF NEW.call_to_action IS DISTINCT FROM OLD.call_to_action THEN
      branding := branding || jsonb_build_object('field', 'emailPreferences.callToAction', 'before', to_jsonb(OLD.call_to_action), 'after', to_jsonb(NEW.call_to_action));
    END IF;
  END IF;
  IF details <> '[]' THEN
    entries := entries || jsonb_build_object('kind', 'details', 'subject', NULL, 'changes', details);
  END IF;
  IF urls <> '[]' THEN
    entries := entries || jsonb_build_object('kind', 'urls', 'subject', NULL, 'changes', urls);
  END IF;
  IF logo <> '[]' THEN
    entries := entries || jsonb_build_object('kind', 'logo', 'subject', NULL, 'changes', logo);
  END IF;
  IF branding <> '[]' THEN
    entries := entries || jsonb_build_object('kind', 'branding', 'subject', NULL, 'changes', branding);
  END IF;
  IF entries <> '[]' THEN
    IF NEW.update_subscribers > 0 THEN
      announce := jsonb_build_object('applicationId', NEW.id, 'actor', jsonb_build_object('userId', NEW.change_actor_id, 'email', NEW.change_actor_email), 'changes', entries);
    END IF;
    IF jsonb_array_length(entries) = 1 THEN
      INSERT INTO application_changes (application_id, actor_user_id, actor_email, kind, changes, announce)
        VALUES (NEW.id, NEW.change_actor_id, NEW.change_actor_email, entries->0->>'kind', entries->0->'changes', announce);
    ELSE
      INSERT INTO application_changes (application_id, actor_user_id, actor_email, kind, changes, announce)
        SELECT NEW.id, NEW.change_actor_id, NEW.change_actor_email, e->>'kind', e->'changes', CASE WHEN i = 1 THEN announce END
        FROM jsonb_array_elements(entries) WITH ORDINALITY AS x(e, i) ORDER BY i;
    END IF;
  END IF;
  NEW.change_actor_id := NULL;
  NEW.change_actor_email := NULL;
  RETURN NEW;
END
$$;
