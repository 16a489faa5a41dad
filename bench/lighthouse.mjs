// Lighthouse (performance + accessibility, desktop and mobile) for /login, /start and an overview page,
// in Debian's Chromium. Signs in through the real login screen so the app pages are measured as a user sees them.
// Usage: node bench/lighthouse.mjs <baseUrl> <email> <password> <appId>   (bench/run.mjs calls it)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import lighthouse from 'lighthouse';
import desktopConfig from 'lighthouse/core/config/desktop-config.js';
import { chromium } from '@playwright/test';
import { freePort } from './lib.mjs';

export async function runLighthouse({ base, email, password, appId }) {
  const port = await freePort();
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-lh-'));
  // A persistent context is the browser's default context, so Lighthouse's tabs share its storage.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', `--remote-debugging-port=${port}`],
  });
  const results = [];
  const audit = async (route, formFactor) => {
    const flags = { port, output: 'json', logLevel: 'error', onlyCategories: ['performance', 'accessibility'], disableStorageReset: true };
    // A run Lighthouse could not finish has a null score (e.g. NO_FCP on a cold browser): that is no
    // measurement, not a 0. Try once more, then report the error instead of a number.
    let lhr;
    for (let attempt = 0; attempt < 2; attempt++) {
      lhr = (await lighthouse(`${base}${route}`, flags, formFactor === 'desktop' ? desktopConfig : undefined)).lhr;
      if (lhr.categories.performance.score !== null) break;
    }
    const c = lhr.categories;
    const score = (v) => (v === null ? `error ${lhr.runtimeError?.code ?? 'unknown'}` : Math.round(v * 100));
    results.push({ route, formFactor, performance: score(c.performance.score), accessibility: score(c.accessibility.score) });
  };
  try {
    for (const ff of ['desktop', 'mobile']) await audit('/login', ff);
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${base}/login`);
    await page.getByLabel(/email/i).fill(email);
    await page.getByLabel(/password/i).fill(password);
    await page.getByRole('button', { name: /login/i }).click();
    await page.waitForURL(/\/start$/);
    for (const ff of ['desktop', 'mobile']) {
      await audit('/start', ff);
      await audit(`/${appId}/overview`, ff);
    }
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [base, email, password, appId] = process.argv.slice(2);
  console.table(await runLighthouse({ base, email, password, appId }));
}
