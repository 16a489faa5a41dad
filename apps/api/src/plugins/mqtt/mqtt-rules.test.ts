import { describe, expect, it } from 'vitest';
import { MAX_DEVICE_MESSAGE_BYTES } from '@latchkey/contract';
import { mayPublish, mayReceive, maySubscribe } from './acl.js';
import { isAllowedDirectAccessEndpoint } from './direct-access.js';
import { FrameGuard } from './frame-guard.js';
import { topicMatches } from './topic-match.js';

const me = '11111111-1111-4111-8111-111111111111';
const other = '22222222-2222-4222-8222-222222222222';

describe('the device topic rules', () => {
  it('let a device publish only its presence, state, results, renewals and events, within the size limit', () => {
    for (const topic of ['presence', 'state', 'result', 'renew', 'event']) expect(mayPublish(me, `latchkey/d/${me}/${topic}`, 10), topic).toBe(true);
    for (const topic of [`latchkey/d/${me}/config`, `latchkey/d/${me}/op`, `latchkey/d/${me}/state/x`, `latchkey/d/${other}/state`, 'latchkey/d', `$SYS/x`, 'other'])
      expect(mayPublish(me, topic, 10), topic).toBe(false);
    expect(mayPublish(me, `latchkey/d/${me}/state`, MAX_DEVICE_MESSAGE_BYTES)).toBe(true);
    expect(mayPublish(me, `latchkey/d/${me}/state`, MAX_DEVICE_MESSAGE_BYTES + 1)).toBe(false);
  });

  it('let a device subscribe and receive only under its own prefix', () => {
    for (const filter of [`latchkey/d/${me}/op`, `latchkey/d/${me}/#`, `latchkey/d/${me}/+`]) expect(maySubscribe(me, filter), filter).toBe(true);
    for (const filter of ['#', 'latchkey/#', 'latchkey/d/+/op', `latchkey/d/${other}/op`, `latchkey/d/${me}`, `latchkey/d/${me}/`]) expect(maySubscribe(me, filter), filter).toBe(false);
    expect(mayReceive(me, `latchkey/d/${me}/op`)).toBe(true);
    expect(mayReceive(me, `latchkey/d/${other}/op`)).toBe(false);
  });

  it('match MQTT filters as brokers do', () => {
    expect(topicMatches('latchkey/d/+/renew', `latchkey/d/${me}/renew`)).toBe(true);
    expect(topicMatches('latchkey/d/+/renew', `latchkey/d/${me}/state`)).toBe(false);
    expect(topicMatches('latchkey/d/#', 'latchkey/d')).toBe(true);
    expect(topicMatches('latchkey/d/#', `latchkey/d/${me}/op`)).toBe(true);
    expect(topicMatches('latchkey/d/+', `latchkey/d/${me}/op`)).toBe(false);
    expect(topicMatches('a/b', 'a/b/c')).toBe(false);
  });
});

describe('the frame guard', () => {
  const header = (length: number) => {
    const bytes = [0x30];
    do {
      let byte = length % 128;
      length = Math.floor(length / 128);
      if (length > 0) byte |= 0x80;
      bytes.push(byte);
    } while (length > 0);
    return Buffer.from(bytes);
  };

  it('passes packets within the limit, however the stream is cut', () => {
    const guard = new FrameGuard(1000);
    const stream = Buffer.concat([header(1000), Buffer.alloc(1000), header(0), header(200), Buffer.alloc(200)]);
    for (let i = 0; i < stream.length; i += 7) expect(guard.feed(stream.subarray(i, i + 7))).toBe(true);
  });

  it('refuses a packet announcing more than the limit from its header, before its body', () => {
    const guard = new FrameGuard(1000);
    expect(guard.feed(Buffer.concat([header(10), Buffer.alloc(10)]))).toBe(true);
    expect(guard.feed(header(1001))).toBe(false);
    expect(new FrameGuard(1000).feed(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01]))).toBe(false);
  });
});

describe('the direct-access endpoints a device may announce', () => {
  it('are private-network addresses, or the address the device connects from', () => {
    for (const url of ['http://10.1.2.3:8080/execute', 'http://172.16.0.9/x', 'http://172.31.255.1/x', 'https://192.168.1.20:8443/execute', 'http://169.254.10.1/x', 'http://[fd12::1]:8080/execute', 'http://[fe80::1]/x', 'http://[::ffff:192.168.1.20]/x'])
      expect(isAllowedDirectAccessEndpoint(url, null), url).toBe(true);
    for (const url of ['http://203.0.113.5:8080/execute', 'https://evil.example.com/execute', 'http://door.local:8080/execute', 'http://127.0.0.1:8080/execute', 'http://[::1]/x', 'http://169.254.169.254/latest', 'http://172.32.0.1/x', 'http://100.64.0.1/x', 'http://user:pw@192.168.1.20/x', 'ftp://192.168.1.20/x', 'not a url', 'http://[2001:db8::1]/x'])
      expect(isAllowedDirectAccessEndpoint(url, null), url).toBe(false);
    expect(isAllowedDirectAccessEndpoint('http://203.0.113.5:8080/execute', '203.0.113.5')).toBe(true);
    expect(isAllowedDirectAccessEndpoint('http://203.0.113.5:8080/execute', '::ffff:203.0.113.5')).toBe(true);
    expect(isAllowedDirectAccessEndpoint('http://203.0.113.6:8080/execute', '203.0.113.5')).toBe(false);
    expect(isAllowedDirectAccessEndpoint('http://[2001:db8::1]:8080/execute', '2001:DB8::1')).toBe(true);
  });
});
