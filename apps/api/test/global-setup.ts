import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createDatabase } from '../src/db/client.js';

/**
 * Migrates one database per run, before any test file starts, for every test file to start from a copy:
 * on PGlite a dump of the migrated data directory (a tarball each file loads), on PostgreSQL a template
 * database each file's database is created from. Both are named by a hash of the migrations, so a run
 * reuses what an earlier run with the same migrations made, and a changed migration makes a new one.
 * helpers.ts migrates afresh when it is given neither (a test file run outside this set-up).
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of a gzipped tarball of a migrated PGlite data directory. */
    pgliteTemplate?: string;
    /** Name of a migrated template database on TEST_DATABASE_URL's server. */
    postgresTemplate?: string;
  }
}

const migrationsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../drizzle');

/** PGlite's package.json: a dump is read back only by the version that wrote it. */
function pgliteVersion(): string {
  let dir = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const json = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (json.name === '@electric-sql/pglite') return json.version ?? '';
    }
    if (path.dirname(dir) === dir) return '';
    dir = path.dirname(dir);
  }
}

/** A hash of every migration file (SQL and journal), and of PGlite's version: what a template depends on. */
function templateHash(): string {
  const hash = crypto.createHash('sha256');
  hash.update(pgliteVersion());
  const walk = (dir: string): string[] =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]))
      .sort();
  for (const file of walk(migrationsDir)) {
    hash.update(path.relative(migrationsDir, file));
    hash.update(fs.readFileSync(file));
  }
  return hash.digest('hex').slice(0, 16);
}

async function pgliteTemplate(hash: string): Promise<string> {
  const file = path.join(os.tmpdir(), `latchkey-test-template-${hash}.tar.gz`);
  if (fs.existsSync(file)) return file;
  const database = await createDatabase({});
  try {
    await database.migrate();
    const dump = Buffer.from(await (await database.dumpDataDir!()).arrayBuffer());
    // Written under another name and renamed: a run in parallel never reads half a file.
    const partial = `${file}.${process.pid}.${crypto.randomUUID()}`;
    fs.writeFileSync(partial, dump);
    fs.renameSync(partial, file);
  } finally {
    await database.close();
  }
  return file;
}

async function postgresTemplate(adminUrl: string, hash: string): Promise<string> {
  const name = `latchkey_template_${hash}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const exists = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount) return name;
    // Migrated under a name of its own, then renamed: the template's name appears only once it is whole,
    // and a run in parallel that renamed its own first wins (this one's copy is dropped).
    const building = `latchkey_template_building_${crypto.randomUUID().replace(/-/g, '')}`;
    await admin.query(`create database ${building}`);
    try {
      const url = new URL(adminUrl);
      url.pathname = `/${building}`;
      const database = await createDatabase({ url: url.toString(), poolSize: 2 });
      try {
        await database.migrate();
      } finally {
        await database.close();
      }
      // No connection may be open on a template while a database is created from it: allow none.
      await admin.query(`alter database ${building} with is_template true allow_connections false`);
      await admin.query(`alter database ${building} rename to ${name}`);
    } catch (error) {
      await admin.query(`alter database ${building} with is_template false`).catch(() => {});
      await admin.query(`drop database if exists ${building} with (force)`);
      const raced = await admin.query('select 1 from pg_database where datname = $1', [name]);
      if (!raced.rowCount) throw error;
    }
    return name;
  } finally {
    await admin.end();
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const hash = templateHash();
  if (project.config.env?.TEST_DB_KIND === 'postgres') {
    const adminUrl = process.env.TEST_DATABASE_URL;
    if (adminUrl) project.provide('postgresTemplate', await postgresTemplate(adminUrl, hash));
  } else {
    project.provide('pgliteTemplate', await pgliteTemplate(hash));
  }
}
