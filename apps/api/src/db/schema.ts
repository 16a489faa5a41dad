import { sql } from 'drizzle-orm';
import {
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
import type { CallToAction, PublicJwk } from '@latchkey/contract';

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
  },
  (t) => [index('sessions_user_id_idx').on(t.userId)],
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
 * The users an application's own backend signs tokens for (issue 7). Two ways in:
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
