import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEVICE_TOPICS } from '@latchkey/contract';

/**
 * The shipped EMQX configuration (deploy/emqx), read as EMQX reads its rules: acl.conf's first matching rule
 * decides (with ${username} the certificate's subject, ${clientid} the client id the platform admitted as
 * the certificate's CN, `#` and `+` as MQTT wildcards), and emqx.conf requires a client certificate, takes
 * its subject — which names the certificate's serial — as the user name, asks the platform at every connect
 * and refuses what no rule allows.
 */

const DIR = path.resolve(import.meta.dirname, '../../../deploy/emqx');
const DEVICE = '0b9e3f2c-6a1d-4c55-9d0e-2f4b7a1c8e11';
const OTHER = '7d2c1e0f-3b4a-4e6f-8a9b-0c1d2e3f4a5b';

/** A client as EMQX knows it: the certificate's subject as the user name, and the client id. */
interface Client {
  username: string;
  clientid: string;
}
const SERVICE: Client = { username: 'CN=latchkey-service', clientid: 'latchkey-service-1a2b' };
const DEVICE_CLIENT: Client = { username: `SERIALNUMBER=5f3a9c,CN=${DEVICE}`, clientid: DEVICE };

interface Rule {
  permission: 'allow' | 'deny';
  who: { username: string } | 'all';
  action: 'publish' | 'subscribe' | 'all';
  topics: string[] | 'all';
}

/** acl.conf's rules: Erlang terms, one per `.`, comments after `%`. */
function readAcl(): Rule[] {
  const text = fs.readFileSync(path.join(DIR, 'acl.conf'), 'utf8').replace(/%.*$/gm, '');
  return text
    .split(/\.\s*(?:\n|$)/)
    .map((term) => term.trim())
    .filter(Boolean)
    .map((term) => {
      const deny = /^\{(allow|deny),\s*all\}$/.exec(term);
      if (deny) return { permission: deny[1] as Rule['permission'], who: 'all', action: 'all', topics: 'all' };
      const match = /^\{(allow|deny),\s*(all|\{username,\s*"([^"]+)"\}),\s*(publish|subscribe|all),\s*\[(.*)\]\}$/s.exec(term);
      if (!match) throw new Error(`acl.conf has a rule this check cannot read: ${term}`);
      return {
        permission: match[1] as Rule['permission'],
        who: match[3] ? { username: match[3] } : 'all',
        action: match[4] as Rule['action'],
        topics: [...match[5]!.matchAll(/"([^"]+)"/g)].map((m) => m[1]!),
      };
    });
}

/** MQTT filter matching: `+` one level, `#` the rest. */
function matches(filter: string, topic: string): boolean {
  const [f, t] = [filter.split('/'), topic.split('/')];
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length || (f[i] !== '+' && f[i] !== t[i])) return false;
  }
  return f.length === t.length;
}

/** EMQX's decision for `client` doing `action` on `topic` (a subscription's filter is compared as a topic). */
function decide(rules: Rule[], client: Client, action: 'publish' | 'subscribe', topic: string): 'allow' | 'deny' {
  const fill = (filter: string) => filter.replaceAll('${username}', client.username).replaceAll('${clientid}', client.clientid);
  for (const rule of rules) {
    if (rule.who !== 'all' && rule.who.username !== client.username) continue;
    if (rule.action !== 'all' && rule.action !== action) continue;
    if (rule.topics !== 'all' && !rule.topics.some((filter) => matches(fill(filter), topic))) continue;
    return rule.permission;
  }
  return 'deny';
}

/** emqx.conf without comments, whitespace squeezed, for looking settings up. */
const conf = fs
  .readFileSync(path.join(DIR, 'emqx.conf'), 'utf8')
  .replace(/#.*$/gm, '')
  .replace(/\s+/g, ' ');

describe('the shipped EMQX rules (deploy/emqx/acl.conf)', () => {
  const rules = readAcl();
  const own = (name: string) => `latchkey/d/${DEVICE}/${name}`;

  it('a device writes only what a device sends, on its own topics', () => {
    for (const name of ['presence', 'state', 'result', 'renew', 'event']) expect(decide(rules, DEVICE_CLIENT, 'publish', own(name)), name).toBe('allow');
    for (const name of ['config', 'op', 'certificate', 'park/1']) expect(decide(rules, DEVICE_CLIENT, 'publish', own(name)), name).toBe('deny');
    expect(decide(rules, DEVICE_CLIENT, 'publish', `latchkey/d/${OTHER}/state`)).toBe('deny');
    expect(decide(rules, DEVICE_CLIENT, 'publish', 'elsewhere')).toBe('deny');
  });

  it('a device reads only what the platform sends it, on its own topics, and no wildcard over others', () => {
    for (const name of ['config', 'op', 'certificate']) expect(decide(rules, DEVICE_CLIENT, 'subscribe', own(name)), name).toBe('allow');
    expect(decide(rules, DEVICE_CLIENT, 'subscribe', own('state'))).toBe('deny');
    expect(decide(rules, DEVICE_CLIENT, 'subscribe', `latchkey/d/${OTHER}/op`)).toBe('deny');
    expect(decide(rules, DEVICE_CLIENT, 'subscribe', 'latchkey/d/+/op')).toBe('deny');
    expect(decide(rules, DEVICE_CLIENT, 'subscribe', 'latchkey/d/#')).toBe('deny');
  });

  it('the service uses every device’s topics and nothing else; every topic a device uses is covered', () => {
    expect(decide(rules, SERVICE, 'subscribe', 'latchkey/d/+/presence')).toBe('allow');
    expect(decide(rules, SERVICE, 'publish', `latchkey/d/${OTHER}/op`)).toBe('allow');
    expect(decide(rules, SERVICE, 'publish', 'elsewhere')).toBe('deny');
    const granted = DEVICE_TOPICS.filter((name) => decide(rules, DEVICE_CLIENT, 'publish', own(name)) === 'allow' || decide(rules, DEVICE_CLIENT, 'subscribe', own(name)) === 'allow');
    expect(granted).toEqual(DEVICE_TOPICS);
  });
});

describe('the shipped EMQX configuration (deploy/emqx/emqx.conf)', () => {
  it('requires a client certificate from the device CA and takes its subject, naming its serial, as the user name', () => {
    expect(conf).toMatch(/listeners\.ssl\.default \{[^}]*verify = verify_peer/);
    expect(conf).toMatch(/fail_if_no_peer_cert = true/);
    expect(conf).toMatch(/peer_cert_as_username = dn/);
    for (const listener of ['tcp', 'ws', 'wss']) expect(conf).toMatch(new RegExp(`listeners\\.${listener}\\.default \\{ enable = false \\}`));
  });

  it('asks the platform at every connect, naming the client id, and refuses what no rule allows', () => {
    expect(conf).toMatch(/backend = http method = get url = "http:\/\/[^"]+\/api\/broker-auth\/user"/);
    expect(conf).toMatch(/accept = "application\/json"/);
    expect(conf).toMatch(/username = "\$\{username\}" client_id = "\$\{clientid\}"/);
    expect(conf).toMatch(/no_match = deny/);
    expect(conf).toMatch(/deny_action = disconnect/);
    expect(conf).toMatch(/max_packet_size = 66560/);
  });
});
