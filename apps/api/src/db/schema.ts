import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { ACCESS_METHODS, DEFAULT_OFFLINE_GRACE_S, DEFAULT_UNLOCK_TIME_S, LOCK_LOG_TYPES, type CallToAction, type PublicJwk } from '@latchkey/contract';

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();

export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** Stored lower-cased: emails compare case-insensitively. */
    email: text('email').notNull(),
    displayName: text('display_name'),
    passwordHash: text('password_hash'),
    /** Pending invitation: argon2 hash of the one-time code, cleared once used. */
    inviteCodeHash: text('invite_code_hash'),
    inviteExpiresAt: timestamp('invite_expires_at', { withTimezone: true }),
    passwordChangeRequired: boolean('password_change_required').notNull().default(false),
    emailVerified: boolean('email_verified').notNull().default(false),
    /**
     * Certificates issued to the user before this instant are refused, by the platform and (through the
     * configs, in whole seconds) by every device: set when a password reset or change ends the earlier keys.
     * Later certificates are issued with a notBefore no earlier than it.
     */
    certifiedAfter: timestamp('certified_after', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('users_email_key').on(t.email)],
);

export const sessions = pgTable(
  'sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** Id of the only refresh token that may still be used; rotation replaces it. */
    refreshJti: uuid('refresh_jti').notNull(),
    publicKey: text('public_key').notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    createdAt: createdAt(),
    /** The browser (User-Agent) that signed in, for the account page's list of sessions. */
    userAgent: text('user_agent'),
    /** Set at sign-in and at every refresh: when the session was last used, to a refresh's precision. */
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    /** Signed in with a passkey: counts as the second factor when a new key is certified */
    secondFactor: boolean('second_factor').notNull().default(false),
  },
  (t) => [index('sessions_user_id_idx').on(t.userId)],
);

/**
 * One-time proofs sent by email: password-reset links and email-verification links (`token_hash`,
 * the SHA-256 of the secret in the link) and six-digit codes for certifying a new key (`sealed_code`,
 * AES-GCM under a server secret: the check needs the code itself to verify its signature). Used once
 * (`used_at`), until `expires_at`; a code takes at most five wrong tries (`attempts`).
 */
export const accountTokens = pgTable(
  'account_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    purpose: text('purpose').notNull(),
    tokenHash: text('token_hash'),
    sealedCode: text('sealed_code'),
    /** key-verify: the Ed25519 key (base64url x) the code certifies once checked. */
    keyX: text('key_x'),
    attempts: integer('attempts').notNull().default(0),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('account_tokens_token_hash_key').on(t.tokenHash), index('account_tokens_user_purpose_idx').on(t.userId, t.purpose)],
);

/** Passkeys (WebAuthn credentials) a portal user signs in with */
export const passkeys = pgTable(
  'passkeys',
  {
    /** The credential id, base64url, as the authenticator gave it. */
    id: text('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** COSE public key, base64url. */
    publicKey: text('public_key').notNull(),
    counter: bigint('counter', { mode: 'number' }).notNull().default(0),
    transports: jsonb('transports').$type<string[]>().notNull().default([]),
    name: text('name').notNull(),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
  },
  (t) => [index('passkeys_user_id_idx').on(t.userId)],
);

/** WebAuthn challenges handed out and not yet answered: each is used once, within 5 minutes. */
export const webauthnChallenges = pgTable('webauthn_challenges', {
  challenge: text('challenge').primaryKey(),
  /** The signed-in user adding a passkey; null for a sign-in (the passkey names its user). */
  userId: uuid('user_id').references(() => users.id, { onDelete: 'cascade' }),
  purpose: text('purpose').notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
});

/** Keys a portal user proved with a second factor: certifying them again needs no new code. */
export const certifiedKeys = pgTable(
  'certified_keys',
  {
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    keyX: text('key_x').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.keyX] })],
);

export const applications = pgTable('applications', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  companyName: text('company_name').notNull(),
  mailingAddress: text('mailing_address').notNull(),
  logoUrl: text('logo_url'),
  privacyPolicy: text('privacy_policy'),
  supportContact: text('support_contact'),
  appLink: text('app_link'),
  senderEmail: text('sender_email'),
  senderName: text('sender_name'),
  primaryColour: text('primary_colour').notNull().default('#00283C'),
  secondaryColour: text('secondary_colour').notNull().default('#45BDD1'),
  onlySendEssentialEmails: boolean('only_send_essential_emails').notNull().default(true),
  callToAction: jsonb('call_to_action').$type<CallToAction | null>(),
  /** Bumped on every change to the application or its rows; keys caches such as rendered previews. */
  version: integer('version').notNull().default(1),
  /**
   * Who is making this UPDATE: set by the statement that changes the row, read and cleared by the
   * change-history trigger (migration 0008, modules/applications/application-update.ts) before the row
   * is written, so they are always null at rest and an update that does not name its actor is recorded
   * as the platform's own.
   */
  changeActorId: uuid('change_actor_id'),
  changeActorEmail: text('change_actor_email'),
  /**
   * How many of its webhooks subscribe to application.updated: counted by a trigger on `webhooks`
   * (migration 0010), read by the history trigger to decide whether a change owes the event.
   */
  updateSubscribers: integer('update_subscribers').notNull().default(0),
  createdAt: createdAt(),
  updatedAt: timestamp('updated_at', { withTimezone: true })
    .notNull()
    .default(sql`now()`),
});

export const applicationOwners = pgTable(
  'application_owners',
  {
    applicationId: uuid('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.applicationId, t.userId] }), index('application_owners_user_id_idx').on(t.userId)],
);

export const applicationKeys = pgTable(
  'application_keys',
  {
    applicationId: uuid('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    kid: text('kid').notNull(),
    jwk: jsonb('jwk').$type<PublicJwk>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.applicationId, t.kid] })],
);

/** An issuer belongs to one application only, so the URL alone is the key. */
export const applicationIssuers = pgTable(
  'application_issuers',
  {
    url: text('url').primaryKey(),
    applicationId: uuid('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    /** Added with discovery, the issuer's key set (from its OpenID configuration); else null. */
    jwksUri: text('jwks_uri'),
    createdAt: createdAt(),
  },
  (t) => [index('application_issuers_application_id_idx').on(t.applicationId)],
);

export const applicationCorsDomains = pgTable(
  'application_cors_domains',
  {
    applicationId: uuid('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    origin: text('origin').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.applicationId, t.origin] }), index('application_cors_domains_origin_idx').on(t.origin)],
);

/**
 * The users an application's own backend signs tokens for. Two ways in:
 * - first sign-in with an application-signed token: an `active` row keyed by (application, sub);
 * - an owner adds someone by email: a `pending` row with `sub` null until a token with that email arrives,
 *   which claims the row (sub set, status active, the original "Added" date kept).
 * The check keeps status and sub in step, so "pending" can never mean two things. Emails are stored
 * lower-cased; two active subs may share an email (the application's backend is the authority on who
 * its users are), but one email is pending at most once per application.
 */
export const applicationUsers = pgTable(
  'application_users',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    applicationId: uuid('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    sub: text('sub'),
    email: text('email'),
    displayName: text('display_name'),
    status: text('status', { enum: ['active', 'pending'] }).notNull(),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }),
  },
  (t) => [
    // NULL subs (pending users) are distinct, so any number of them fit; a real sub appears once.
    uniqueIndex('application_users_sub_key').on(t.applicationId, t.sub),
    uniqueIndex('application_users_pending_email_key')
      .on(t.applicationId, sql`lower(${t.email})`)
      .where(sql`${t.sub} is null`),
    // Keyset paging: (created_at, id) within one application.
    index('application_users_page_idx').on(t.applicationId, t.createdAt, t.id),
    check(
      'application_users_status_check',
      sql`(${t.status} = 'active' and ${t.sub} is not null) or (${t.status} = 'pending' and ${t.sub} is null and ${t.email} is not null)`,
    ),
  ],
);

/**
 * Server-wide secrets and keys that every instance must share (the platform CA, upload-URL secret …):
 * the first instance to start creates a row, every other one reads it (lib/server-secrets.ts).
 */
export const serverSecrets = pgTable('server_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: createdAt(),
});

/**
 * The portal's token signing keys (Ed25519), shared by every instance. One is `active` (signs); after a
 * rotation the one before is `previous` and still verifies until `verify_until`, when its tokens have
 * all expired; then it is `retired` and its private part erased. Rotated with `npm run keys:rotate`.
 */
export const signingKeys = pgTable(
  'signing_keys',
  {
    kid: text('kid').primaryKey(),
    status: text('status', { enum: ['active', 'previous', 'retired'] }).notNull(),
    /** The public JWK (kty, crv, x), as published at /.well-known/jwks.json. */
    publicJwk: jsonb('public_jwk').$type<{ kty: string; crv: string; x: string }>().notNull(),
    /** PKCS#8 PEM, sealed when SECRETS_ENCRYPTION_KEY is set (lib/secret-box.ts); null once retired. */
    privateKey: text('private_key'),
    createdAt: createdAt(),
    activatedAt: timestamp('activated_at', { withTimezone: true }).notNull().defaultNow(),
    verifyUntil: timestamp('verify_until', { withTimezone: true }),
    retiredAt: timestamp('retired_at', { withTimezone: true }),
  },
  (t) => [
    // At most one signing key, whatever two instances or a rotation race do.
    uniqueIndex('signing_keys_one_active_idx').on(t.status).where(sql`${t.status} = 'active'`),
    check('signing_keys_status_check', sql`${t.status} in ('active', 'previous', 'retired')`),
  ],
);

/** What `usageRequirements` holds (platform-api.md): time windows and a location rule. */
export interface LockUsageRequirements {
  time?: { start: string; end: string; timezone: string; days: string[] }[];
  location?: { latitude: number; longitude: number; radius: number; accuracy: 'FINE' | 'HIGH' | 'MEDIUM' | 'LOW'; enabled: boolean } | null;
}

/**
 * Sandbox locks: virtual locks of one application, whose owners are their admins. A lock is unlocked
 * while `unlocked_until` is in the future, so it returns to locked by itself when the unlock time runs out.
 */
export const locks = pgTable(
  'locks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    applicationId: uuid('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    colour: text('colour'),
    /** Seconds a MUTATE_LOCK without its own duration keeps the lock open (1–60). */
    unlockTime: integer('unlock_time').notNull().default(DEFAULT_UNLOCK_TIME_S),
    usageRequirements: jsonb('usage_requirements').$type<LockUsageRequirements>().notNull().default({}),
    unlockedUntil: timestamp('unlocked_until', { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    /** The public IP addresses an admin listed for the lock (the SDKs' `permittedAddresses`). */
    permittedAddresses: jsonb('permitted_addresses').$type<string[]>().notNull().default([]),
    /** Hidden from its users' favourites (the SDKs' `settings.hidden`). */
    hidden: boolean('hidden').notNull().default(false),
    /**
     * How long a device keeps obeying signed operations after its config was issued when it cannot hear
     * from the platform (60 s – 30 days); access codes keep working past it.
     */
    offlineGraceSeconds: integer('offline_grace_seconds').notNull().default(DEFAULT_OFFLINE_GRACE_S),
    /** What the door last reported (a device's sensor or a virtual lock's simulation): 'open' | 'closed'; null = unknown. */
    doorState: text('door_state', { enum: ['open', 'closed'] }),
    /** The last battery level reported, 0–100; null = none reported. */
    battery: integer('battery'),
    /** Alarms raised and not yet cleared: 'jammed', 'tampered', 'low_battery'. */
    alarms: jsonb('alarms').$type<string[]>().notNull().default([]),
  },
  (t) => [index('locks_application_id_idx').on(t.applicationId, t.createdAt)],
);

/**
 * What one user set on a lock for themselves (the SDKs' PUT /device/{lockId}): an alias shown
 * instead of the lock's name, a favourite mark, a colour. `user_id` is an application user or a portal
 * user (an owner), so it has no foreign key; the row goes with its lock.
 */
export const lockUserSettings = pgTable(
  'lock_user_settings',
  {
    lockId: uuid('lock_id')
      .notNull()
      .references(() => locks.id, { onDelete: 'cascade' }),
    userId: uuid('user_id').notNull(),
    alias: text('alias'),
    favourite: boolean('favourite').notNull().default(false),
    colour: text('colour'),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.lockId, t.userId] }), index('lock_user_settings_user_id_idx').on(t.userId)],
);

/** A lock shared with one application user (active, or pending: invited by email). */
export const lockShares = pgTable(
  'lock_shares',
  {
    lockId: uuid('lock_id')
      .notNull()
      .references(() => locks.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => applicationUsers.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['USER', 'ADMIN'] }).notNull().default('USER'),
    startsAt: timestamp('starts_at', { withTimezone: true }),
    endsAt: timestamp('ends_at', { withTimezone: true }),
    /** The share's own time window (days, hours, zone); null = any time between the bounds. */
    timeWindow: jsonb('time_window').$type<{ start: string; end: string; timezone: string; days: string[] } | null>(),
    /** An emailed invitation stops being accepted after this; null for a share to an existing user. */
    inviteExpiresAt: timestamp('invite_expires_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.lockId, t.userId] }), index('lock_shares_user_id_idx').on(t.userId)],
);

/**
 * Every accepted and refused operation on a lock, newest first by (at, seq). `seq` is a monotonic
 * tie-breaker for cursor paging; the (lock_id, at, seq) index keeps a page an index range scan at any size.
 */
export const lockActivity = pgTable(
  'lock_activity',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity().notNull(),
    lockId: uuid('lock_id')
      .notNull()
      .references(() => locks.id, { onDelete: 'cascade' }),
    applicationId: uuid('application_id').notNull(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    type: text('type', { enum: LOCK_LOG_TYPES }).notNull(),
    actorUserId: uuid('actor_user_id'),
    actorEmail: text('actor_email'),
    actorDisplayName: text('actor_display_name'),
    subject: text('subject'),
    rejected: boolean('rejected').notNull().default(false),
    reason: text('reason'),
    /**
     * How many refusals the entry stands for: identical refusals (same caller, lock, kind and reason)
     * within a minute of it add here instead of adding entries (operations.service.ts).
     */
    repeats: integer('repeats').notNull().default(1),
    /** How an access was made: mobile_key, local, access_code, tile, console; null for other entries. */
    method: text('method', { enum: ACCESS_METHODS }),
    /** The access code used or concerned (its row may be gone). */
    accessCodeId: uuid('access_code_id'),
    /** Who reported it: the platform deciding, or a device telling what it decided. */
    source: text('source', { enum: ['platform', 'device'] }).notNull().default('platform'),
    /** Decided by the door while it could not reach the platform (delivered later). */
    offline: boolean('offline').notNull().default(false),
    /** A device event's own id: each is logged once. */
    eventId: uuid('event_id'),
    /** The device event's place in its device's chain. */
    deviceSeq: bigint('device_seq', { mode: 'number' }),
    /** A number the entry carries (a battery level). */
    value: integer('value'),
  },
  (t) => [
    index('lock_activity_page_idx').on(t.lockId, t.at, t.seq),
    uniqueIndex('lock_activity_event_id_idx').on(t.eventId).where(sql`event_id IS NOT NULL`),
    index('lock_activity_application_idx').on(t.applicationId, t.at, t.seq),
  ],
);

/**
 * PIN codes of a lock. Online codes ride in the device's signed config as salted hashes; offline codes are
 * computed from the device's offline-code secret and reach no config unless withdrawn. The code itself is
 * kept sealed (lib/secret-box.ts) so owners and ADMINs can be shown it again.
 */
export const accessCodes = pgTable(
  'access_codes',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    lockId: uuid('lock_id')
      .notNull()
      .references(() => locks.id, { onDelete: 'cascade' }),
    applicationId: uuid('application_id').notNull(),
    name: text('name').notNull(),
    kind: text('kind', { enum: ['online', 'offline'] }).notNull(),
    sealedCode: text('sealed_code').notNull(),
    startsAt: timestamp('starts_at', { withTimezone: true }),
    endsAt: timestamp('ends_at', { withTimezone: true }),
    /** The first config version of the lock's device that holds the code (online codes); null = not yet published. */
    configVersion: integer('config_version'),
    createdBy: uuid('created_by'),
    createdAt: createdAt(),
    /** Withdrawn codes stay (an offline one on the withdrawn list until its end); null = current. */
    withdrawnAt: timestamp('withdrawn_at', { withTimezone: true }),
  },
  (t) => [index('access_codes_lock_id_idx').on(t.lockId, t.createdAt)],
);

/** Single-use operation ids (`jti`, or the signature's hash for clients that send none): replay → 409. */
export const usedOperationIds = pgTable(
  'used_operation_ids',
  {
    id: text('id').primaryKey(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('used_operation_ids_expires_at_idx').on(t.expiresAt)],
);

/**
 * The Outbox: every email the platform sent for an application, as rendered; and, on a service without SMTP,
 * the emails a portal account was sent (its codes and links are nowhere else a person can read them).
 */
export const sentEmails = pgTable(
  'sent_emails',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** The application it was sent for (its owners see it); null for a portal account's own email. */
    applicationId: uuid('application_id').references(() => applications.id, { onDelete: 'cascade' }),
    /** The portal account it was sent to (only that account sees it); null for an application's email. */
    userId: uuid('user_id').references(() => users.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(),
    to: text('to').notNull(),
    subject: text('subject').notNull(),
    html: text('html').notNull(),
    text: text('text').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index('sent_emails_application_idx').on(t.applicationId, t.createdAt),
    index('sent_emails_user_idx').on(t.userId, t.createdAt),
    check('sent_emails_reader_check', sql`${t.applicationId} is not null or ${t.userId} is not null`),
  ],
);

/**
 * An application's change history (modules/history): one row per kind of change, written in the same
 * transaction as the change. `changes` holds [{field, before, after}] with secrets already redacted.
 * Newest first by (at, seq), like the lock log; the actor is kept as it was (an owner may leave later).
 * Keyed by its place in the application's timeline, the index every read uses; `id` is what the API
 * shows and is never looked up. No foreign key (decision 0008): every writer holds the application's
 * row (the history trigger updates it, recordChange takes it FOR KEY SHARE), and the purge trigger of
 * migration 0010 deletes an application's history with it.
 */
export const applicationChanges = pgTable(
  'application_changes',
  {
    id: uuid('id').notNull().defaultRandom(),
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity().notNull(),
    applicationId: uuid('application_id').notNull(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    actorUserId: uuid('actor_user_id'),
    actorEmail: text('actor_email'),
    kind: text('kind').notNull(),
    subject: text('subject'),
    changes: jsonb('changes').$type<{ field: string; before: unknown; after: unknown }[]>().notNull(),
    /**
     * The application.updated event this change owes (its `data`), on one entry of the change, while a
     * webhook was subscribed when it was made; null otherwise and once the relay has turned it into
     * deliveries (modules/webhooks/delivery.ts). The change's own row is its outbox entry: the update
     * writes no second row (history may add at most 10 % to an update: docs/performance.md).
     */
    announce: jsonb('announce'),
  },
  (t) => [
    primaryKey({ name: 'application_changes_pkey', columns: [t.applicationId, t.at, t.seq] }),
    index('application_changes_announce_idx').on(t.seq).where(sql`${t.announce} is not null`),
  ],
);

/**
 * Webhook endpoints of an application (modules/webhooks). `secret` is the signing secret (whsec_…),
 * sealed like the other secrets (lib/secret-box.ts); it is shown once, when made.
 */
export const webhooks = pgTable(
  'webhooks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    applicationId: uuid('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    events: jsonb('events').$type<string[]>().notNull(),
    secret: text('secret').notNull(),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('webhooks_application_id_idx').on(t.applicationId)],
);

/**
 * The transactional outbox and delivery log in one: a row is written in the same transaction as the
 * event's change (one per subscribed endpoint), handed to the job queue by the relay (`relay_after` set
 * to null once handed over; a lease while it is being handed), and updated by each attempt. Its id is
 * the `webhook-id` header.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    webhookId: uuid('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    applicationId: uuid('application_id').notNull(),
    eventType: text('event_type').notNull(),
    payload: jsonb('payload').notNull(),
    status: text('status', { enum: ['pending', 'retrying', 'succeeded', 'failed'] }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    responseStatus: integer('response_status'),
    lastError: text('last_error'),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    relayAfter: timestamp('relay_after', { withTimezone: true }).defaultNow(),
  },
  (t) => [
    index('webhook_deliveries_webhook_idx').on(t.webhookId, t.createdAt),
    index('webhook_deliveries_relay_idx').on(t.relayAfter).where(sql`${t.relayAfter} is not null`),
  ],
);

/** Sites: an application's locks grouped by building. A lock is in at most one site (site_locks). */
export const sites = pgTable(
  'sites',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    applicationId: uuid('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('sites_application_name_key').on(t.applicationId, sql`lower(${t.name})`)],
);

/** Which site a lock is in: one row per lock that is in one (the primary key keeps it to one). */
export const siteLocks = pgTable(
  'site_locks',
  {
    lockId: uuid('lock_id')
      .primaryKey()
      .references(() => locks.id, { onDelete: 'cascade' }),
    siteId: uuid('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
  },
  (t) => [index('site_locks_site_id_idx').on(t.siteId)],
);

/**
 * Tiles: the code at a door (an NFC sticker, a printed QR code) a phone reads to find its locks.
 * The id is the tile's own UUID; a tile belongs to the application whose lock it was first linked to.
 */
export const tiles = pgTable(
  'tiles',
  {
    id: uuid('id').primaryKey(),
    applicationId: uuid('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    /** The site it was associated under (PUT /tile/{tileId}); null: none, the application stands for it. */
    siteId: uuid('site_id').references(() => sites.id, { onDelete: 'set null' }),
    /** What its owners call it; null until named (the portal then shows the start of its id). */
    name: text('name'),
    createdAt: createdAt(),
  },
  (t) => [index('tiles_application_id_idx').on(t.applicationId)],
);

export const tileLocks = pgTable(
  'tile_locks',
  {
    tileId: uuid('tile_id')
      .notNull()
      .references(() => tiles.id, { onDelete: 'cascade' }),
    lockId: uuid('lock_id')
      .notNull()
      .references(() => locks.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.tileId, t.lockId] }), index('tile_locks_lock_id_idx').on(t.lockId, t.createdAt)],
);

/**
 * The device bound to a lock (shared/design/device-protocol.md): at most one per lock, replaced by a new
 * one. Until provisioned it holds only the provisioning code's hash and expiry; then the serial and end of
 * its certificate, and what the device last reported (presence, state, firmware). A lock without a row is
 * a sandbox lock: a virtual device in the service.
 */
export const lockDevices = pgTable(
  'lock_devices',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    lockId: uuid('lock_id')
      .notNull()
      .references(() => locks.id, { onDelete: 'cascade' }),
    /** SHA-256 of the provisioning code, hex; null once used. */
    codeHash: text('code_hash'),
    codeExpiresAt: timestamp('code_expires_at', { withTimezone: true }),
    provisionedAt: timestamp('provisioned_at', { withTimezone: true }),
    /** The serial (hex) of the certificate the device holds now; older ones are in revoked_device_certificates. */
    certificateSerial: text('certificate_serial'),
    certificateNotAfter: timestamp('certificate_not_after', { withTimezone: true }),
    /**
     * Whether that certificate names its serial in its subject (serialNumber, 2.5.4.5), as every one issued
     * since migration 0024 does: a clustered broker, which passes the platform the subject and not the
     * certificate, is then refused every other certificate of the device (modules/broker-auth).
     */
    certificateSubjectSerial: boolean('certificate_subject_serial').notNull().default(false),
    connected: boolean('connected').notNull().default(false),
    lastSeen: timestamp('last_seen', { withTimezone: true }),
    firmware: text('firmware'),
    /** The device's last `…/state` message: `{locked, at, directAccessEndpoints?}`. */
    state: jsonb('state').$type<{ locked: boolean; at: string; directAccessEndpoints?: string[] }>(),
    /** The version of the last config published to it. */
    configVersion: integer('config_version').notNull().default(0),
    /**
     * What the config the device was last sent says of itself: when it was issued, its offline grace, a hash
     * of its content, and the offline codes it withdrew (with their salt). A restarted service knows from
     * these which configs its devices hold, and re-issues only one that changed or is due.
     */
    configIssuedAt: timestamp('config_issued_at', { withTimezone: true }),
    configGraceSeconds: integer('config_grace_seconds'),
    configHash: text('config_hash'),
    configWithdrawn: jsonb('config_withdrawn').$type<{ accessCodeSalt: string; withdrawnOfflineCodes: unknown[] }>(),
    /** The presence last announced to webhooks (device.online / device.offline), which waits for a change to hold. */
    presenceAnnounced: boolean('presence_announced').notNull().default(false),
    /** When `connected` last changed: a presence is announced once it has held DEVICE_PRESENCE_SETTLE_S. */
    presenceChangedAt: timestamp('presence_changed_at', { withTimezone: true }),
    /** The highest config version the device said it holds (its `…/state` reports). */
    configAckedVersion: integer('config_acked_version').notNull().default(0),
    /** The device's offline-code secret (base64url, 32 bytes), sealed; given to it once, at provisioning. */
    offlineCodeSecret: text('offline_code_secret'),
    /** The public key of the certificate the device holds now (SPKI PEM): its events are signed with it. */
    certificatePublicKey: text('certificate_public_key'),
    /** The last event of the device's chain the platform logged: its `seq` and the SHA-256 of its JWS. */
    eventSeq: bigint('event_seq', { mode: 'number' }).notNull().default(0),
    eventHash: text('event_hash'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('lock_devices_lock_id_idx').on(t.lockId), index('lock_devices_code_hash_idx').on(t.codeHash)],
);

/** Certificates of unbound or replaced devices: refused by the embedded broker, listed in the CRL. */
export const revokedDeviceCertificates = pgTable('revoked_device_certificates', {
  serial: text('serial').primaryKey(),
  deviceId: uuid('device_id').notNull(),
  revokedAt: timestamp('revoked_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Single-use sign-in links a tile's page emails to a person a lock is shared with (an application user):
 * only the secret's SHA-256 is kept; a link is spent by setting `used_at`, and dies at `expires_at`.
 */
export const tileSignInTokens = pgTable(
  'tile_sign_in_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    applicationUserId: uuid('application_user_id')
      .notNull()
      .references(() => applicationUsers.id, { onDelete: 'cascade' }),
    tileId: uuid('tile_id')
      .notNull()
      .references(() => tiles.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('tile_sign_in_tokens_token_hash_key').on(t.tokenHash), index('tile_sign_in_tokens_user_idx').on(t.applicationUserId)],
);

/**
 * Messages of the instances' embedded brokers too large for a NOTIFY (plugins/mqtt/bridge.ts): stored here,
 * their id notified on `latchkey_mqtt`, read by the other instances, and removed after a minute.
 */
export const mqttBridgeMessages = pgTable('mqtt_bridge_messages', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  topic: text('topic').notNull(),
  retain: boolean('retain').notNull(),
  /** The payload in base64. */
  payload: text('payload').notNull(),
  createdAt: createdAt(),
});

/**
 * Each instance of the service on one database says here, every few seconds, that it is alive
 * (modules/devices/runtime/instance-heartbeat.ts); one silent for longer than the limit has crashed.
 */
export const instanceHeartbeats = pgTable('instance_heartbeats', {
  instanceId: text('instance_id').primaryKey(),
  lastSeen: timestamp('last_seen', { withTimezone: true }).notNull().defaultNow(),
  startedAt: createdAt(),
});

/**
 * Which instance's embedded broker holds each connected device, since when (epoch ms on that instance): a
 * crashed instance sends no Last Will, so its peers mark its devices offline from these rows.
 */
export const deviceConnections = pgTable(
  'device_connections',
  {
    deviceId: uuid('device_id')
      .primaryKey()
      .references(() => lockDevices.id, { onDelete: 'cascade' }),
    instanceId: text('instance_id').notNull(),
    since: bigint('since', { mode: 'number' }).notNull(),
  },
  (t) => [index('device_connections_instance_idx').on(t.instanceId)],
);
