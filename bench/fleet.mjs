// Shared pieces of the fleet benches (reconnect-storm.mjs, device-memory.mjs): the built service started
// with node options of the bench's choosing, thousands of devices provisioned through the API (each its own
// key and certificate), kept between runs when FLEET_CACHE names a directory, and the swarm of client
// processes (device-swarm.mjs) that connects them.
import 'reflect-metadata';
import { fork, spawn } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as x509 from '@peculiar/x509';
import { api, freePort, root, scratchDatabase, waitFor } from './lib.mjs';

x509.cryptoProvider.set(webcrypto);

/** An application holds at most 50 locks, and a lock at most one device. */
const LOCKS_PER_APPLICATION = 50;

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

/** `fn` over `items`, `concurrency` at a time, in order of start. */
export async function pool(items, concurrency, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

export async function waitUntil(check, timeoutMs, what, everyMs = 100) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

export const portOpen = (port) =>
  new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
    s.setTimeout(2000, () => (s.destroy(), resolve(false)));
    s.on('error', () => resolve(false));
  });

/**
 * The built service as a process on `dataDir` (kept), with `nodeArgs` before the entry point and `env`
 * over the bench's defaults (generous rate limits, logs off). → { url, pid, child, stop(signal) }.
 */
export async function startService(env, { dataDir, nodeArgs = [] }) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [...nodeArgs, 'apps/api/dist/main.js'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: url,
      DATA_DIR: dataDir,
      LOG_LEVEL: process.env.FLEET_LOG_LEVEL ?? 'silent',
      SHUTDOWN_DRAIN_SECONDS: '0',
      RATE_LIMIT_MAX: '100000000',
      ANONYMOUS_RATE_LIMIT_MAX: '100000000',
      LOGIN_RATE_LIMIT_MAX: '100000000',
      ...env,
    },
    stdio: ['ignore', process.env.FLEET_LOG_LEVEL ? 'inherit' : 'ignore', 'inherit'],
  });
  const exited = new Promise((r) => child.once('exit', r));
  await Promise.race([waitFor(`${url}/api/ready`, 120_000), exited.then(() => Promise.reject(new Error('the service exited')))]);
  return {
    url,
    pid: child.pid,
    child,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** A device's key and CSR as `latchkey-device provision` makes them: ECDSA P-256, no subject. */
async function keyAndCsr() {
  const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: '', keys, signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' } });
  const key = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  return { key, csr: csr.toString('pem') };
}

/** ⌈count ÷ 50⌉ applications of 50 locks, a device provisioned on each lock (code + CSR → certificate). */
async function provision(svc, count, log) {
  const { body: auth } = await api(svc.url, 'POST', '/auth/register', {
    body: { email: `fleet.${Date.now()}@example.com`, password: 'bench-password', displayName: 'Fleet' },
  });
  const token = auth.authToken;
  const appIds = await pool(Array.from({ length: Math.ceil(count / LOCKS_PER_APPLICATION) }, (_, i) => i), 8, async (i) => {
    const { res } = await api(svc.url, 'POST', '/platform/application', {
      token,
      body: { name: `Fleet ${i}`, companyName: 'Fleet Ltd', mailingAddress: '1 Fleet Road' },
    });
    return res.headers.get('location').split('/').pop();
  });
  const locks = (
    await pool(appIds, 4, async (appId) => {
      const { body: existing } = await api(svc.url, 'GET', `/platform/application/${appId}/lock`, { token });
      const made = await pool(Array.from({ length: LOCKS_PER_APPLICATION - existing.length }, (_, i) => i), 4, async (i) =>
        (await api(svc.url, 'POST', `/platform/application/${appId}/lock`, { token, body: { name: `Door ${i}` } })).body,
      );
      return [...existing, ...made].map((l) => ({ appId, lockId: l.id }));
    })
  )
    .flat()
    .slice(0, count);
  log(`  ${appIds.length} applications, ${locks.length} locks`);
  const csrs = await pool(locks, 8, () => keyAndCsr());
  const t = Date.now();
  const devices = await pool(locks, 16, async ({ appId, lockId }, i) => {
    const { body: created } = await api(svc.url, 'POST', `/platform/application/${appId}/lock/${lockId}/device`, { token });
    const { body: provisioned } = await api(svc.url, 'POST', '/device-provisioning', {
      body: { code: created.provisioningCode, csr: csrs[i].csr },
    });
    return { deviceId: provisioned.deviceId, key: csrs[i].key, cert: provisioned.certificate, mqttUrl: provisioned.mqttUrl, ca: provisioned.caCertificates[0] };
  });
  log(`  ${count} devices provisioned in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  return devices;
}

/**
 * A service's data (PGlite data dir, or a PostgreSQL database) with `count` devices provisioned, and the
 * environment to start it on: { env, dataDir, devices, drop }. With FLEET_CACHE=<dir> the fleet is kept
 * there (the PostgreSQL database too) and reused by the next run of the same database and count.
 */
export async function fleet({ db, count, log = console.log }) {
  const cacheRoot = process.env.FLEET_CACHE;
  const dir = cacheRoot ? path.join(cacheRoot, `${db}-${count}`) : fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-fleet-'));
  const file = path.join(dir, 'fleet.json');
  const keep = Boolean(cacheRoot);
  if (keep && fs.existsSync(file)) {
    const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    log(`  fleet of ${count} on ${db} from ${dir}`);
    return { ...saved, drop: async () => {} };
  }
  fs.mkdirSync(dir, { recursive: true });
  const dataDir = path.join(dir, 'data');
  fs.mkdirSync(dataDir, { recursive: true });
  let scratch = null;
  if (db === 'postgres') {
    const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
    if (!adminUrl) throw new Error('FLEET_DB=postgres needs BENCH_DATABASE_URL or TEST_DATABASE_URL');
    scratch = await scratchDatabase(adminUrl);
  }
  // A fixed broker port: the devices keep the URL they were given across the service's restarts.
  const env = { MQTT_PORT: String(await freePort()), ACCESS_TOKEN_TTL_SECONDS: '7200', ...(scratch ? { DATABASE_URL: scratch.url } : {}) };
  const svc = await startService(env, { dataDir });
  let devices;
  try {
    devices = await provision(svc, count, log);
  } finally {
    await svc.stop();
  }
  const saved = { env, dataDir, devices };
  if (keep) fs.writeFileSync(file, JSON.stringify(saved));
  return {
    ...saved,
    drop: async () => {
      if (keep) return;
      await scratch?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The devices connected from `workers` processes (device-swarm.mjs) to `url`: → { totals(), firstDone,
 * stop() }. `rate`: first connects a second in all (0: 50 at a time in each process).
 */
export function startSwarm(devices, { url, ca, workers = 3, rate = 0 }) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-swarm-'));
  const status = new Map();
  const children = [];
  const dones = [];
  for (let w = 0; w < workers; w++) {
    const part = devices.filter((_, i) => i % workers === w);
    const file = path.join(tmp, `swarm-${w}.json`);
    fs.writeFileSync(file, JSON.stringify({ url, ca, devices: part.map(({ deviceId, key, cert }) => ({ deviceId, key, cert })) }));
    const child = fork(path.join(import.meta.dirname, 'device-swarm.mjs'), [file], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      env: { ...process.env, ...(rate > 0 ? { SWARM_RATE: String(rate / workers) } : {}) },
    });
    children.push(child);
    dones.push(
      new Promise((resolve, reject) => {
        child.on('message', (m) => {
          status.set(w, m);
          if (m.done) resolve(m);
        });
        child.on('exit', (code) => reject(new Error(`swarm worker ${w} exited (${code})`)));
      }),
    );
  }
  const totals = () => {
    const all = [...status.values()];
    const sum = (k) => all.reduce((n, s) => n + s[k], 0);
    const merge = (k) => {
      const out = {};
      for (const s of all) for (const [c, n] of Object.entries(s[k])) out[c] = (out[c] ?? 0) + n;
      return out;
    };
    return { connected: sum('connected'), ever: sum('ever'), failed: sum('failed'), retries: sum('retries'), refusals: merge('refusals'), errors: merge('errors') };
  };
  return {
    pids: children.map((c) => c.pid),
    totals,
    firstDone: Promise.all(dones),
    stop: async () => {
      await Promise.all(
        children.map(
          (child) =>
            new Promise((resolve) => {
              if (child.exitCode !== null) return resolve();
              child.removeAllListeners('exit');
              child.once('exit', resolve);
              child.send('stop');
              setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
            }),
        ),
      );
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** utime + stime of a process, in clock ticks (1/100 s). */
export const cpuTicks = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]);
};

export { freePort, root };
