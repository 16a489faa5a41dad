ALTER TABLE "applications" ADD COLUMN "change_actor_id" uuid;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "change_actor_email" text;
--> statement-breakpoint
-- Change history of the application's own fields (issue 19), written by the database in the UPDATE that
-- makes the change: one entry per kind of change with the {field, before, after} of each changed column,
-- and application.updated queued for every webhook subscribed to it (the rows history.service.ts's
-- recordChange and webhooks/outbox.ts's publishEvent write). The UPDATE names its actor in
-- change_actor_id/change_actor_email; they are cleared here, so they are null at rest and an UPDATE that
-- names none is recorded as the platform's own. A BEFORE trigger sees the row as it is when the update
-- takes its lock, so concurrent updates form one unbroken before/after chain. Each kind's columns are
-- compared as one row first (a save changes one kind). Its statements are planned
-- once per connection (PL/pgSQL caches them): this is what keeps recording within issue 19's 10 % of an
-- update (docs/performance.md). The field names and kinds are application-update.ts's historyFields; a
-- test (history.test.ts) updates each of them and fails on any column this does not record.
CREATE OR REPLACE FUNCTION "latchkey_application_history"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  details jsonb := '[]';
  urls jsonb := '[]';
  logo jsonb := '[]';
  branding jsonb := '[]';
  entries jsonb := '[]';
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
    INSERT INTO application_changes (application_id, actor_user_id, actor_email, kind, changes)
      VALUES (NEW.id, NEW.change_actor_id, NEW.change_actor_email, 'details', details);
    entries := entries || jsonb_build_object('kind', 'details', 'subject', NULL, 'changes', details);
  END IF;
  IF urls <> '[]' THEN
    INSERT INTO application_changes (application_id, actor_user_id, actor_email, kind, changes)
      VALUES (NEW.id, NEW.change_actor_id, NEW.change_actor_email, 'urls', urls);
    entries := entries || jsonb_build_object('kind', 'urls', 'subject', NULL, 'changes', urls);
  END IF;
  IF logo <> '[]' THEN
    INSERT INTO application_changes (application_id, actor_user_id, actor_email, kind, changes)
      VALUES (NEW.id, NEW.change_actor_id, NEW.change_actor_email, 'logo', logo);
    entries := entries || jsonb_build_object('kind', 'logo', 'subject', NULL, 'changes', logo);
  END IF;
  IF branding <> '[]' THEN
    INSERT INTO application_changes (application_id, actor_user_id, actor_email, kind, changes)
      VALUES (NEW.id, NEW.change_actor_id, NEW.change_actor_email, 'branding', branding);
    entries := entries || jsonb_build_object('kind', 'branding', 'subject', NULL, 'changes', branding);
  END IF;
  IF entries <> '[]' THEN
    INSERT INTO webhook_deliveries (webhook_id, application_id, event_type, payload)
      SELECT w.id, w.application_id, 'application.updated', jsonb_build_object(
        'type', 'application.updated',
        'timestamp', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'data', jsonb_build_object(
          'applicationId', NEW.id,
          'actor', jsonb_build_object('userId', NEW.change_actor_id, 'email', NEW.change_actor_email),
          'changes', entries))
      FROM webhooks w
      WHERE w.application_id = NEW.id AND w.events ? 'application.updated';
  END IF;
  NEW.change_actor_id := NULL;
  NEW.change_actor_email := NULL;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "applications_history" BEFORE UPDATE ON "applications" FOR EACH ROW EXECUTE FUNCTION "latchkey_application_history"();
