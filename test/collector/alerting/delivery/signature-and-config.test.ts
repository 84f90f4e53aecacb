import { describe, expect, it } from 'vitest';
import { backoffDelay, parseRetryAfter } from '../../../../collector/alerting/delivery/backoff.js';
import { labelSet } from '../../../../collector/alerting/delivery/index.js';
import { signature, verifySignature } from '../../../../collector/alerting/delivery/signature.js';
import { optionsFromEnvironment, resolveConfig } from '../../../../collector/config.js';
import { ConfigError } from '../../../../collector/model/errors.js';

const SECRET = 'a-secret-of-enough-length';
const BODY = '{"id":"t-1","transition":{"from":"pending","to":"firing"}}';

describe('webhook signatures', () => {
  const now = Date.UTC(2026, 0, 1, 12);
  const timestamp = String(Math.floor(now / 1000));
  const signed = { timestamp, signature: signature(SECRET, Number(timestamp), BODY) };

  it('verify with the secret over timestamp and body', () => {
    expect(signed.signature).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(verifySignature(SECRET, BODY, signed, now)).toEqual({ ok: true });
  });

  it('fail for a changed body, another secret, a changed timestamp, or no headers', () => {
    expect(verifySignature(SECRET, BODY.replace('firing', 'resolved'), signed, now)).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySignature('another-secret-of-length', BODY, signed, now)).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySignature(SECRET, BODY, { ...signed, timestamp: String(Number(timestamp) + 1) }, now)).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySignature(SECRET, BODY, { timestamp: undefined, signature: undefined }, now)).toEqual({ ok: false, reason: 'missing' });
  });

  it('refuse a replay older than the tolerance', () => {
    expect(verifySignature(SECRET, BODY, signed, now + 301_000)).toEqual({ ok: false, reason: 'stale' });
    expect(verifySignature(SECRET, BODY, signed, now + 299_000)).toEqual({ ok: true });
  });
});

describe('retry backoff', () => {
  const policy = { initialDelayMs: 1000, maxDelayMs: 8000, maxAttempts: 10 };

  it('doubles from the initial delay with jitter in the upper half, and stops at the cap', () => {
    expect([1, 2, 3].map((retry) => backoffDelay(policy, retry, undefined, () => 0))).toEqual([500, 1000, 2000]);
    expect([1, 2, 3].map((retry) => backoffDelay(policy, retry, undefined, () => 1))).toEqual([1000, 2000, 4000]);
    expect(backoffDelay(policy, 30, undefined, () => 1)).toBe(8000);
  });

  it('honours Retry-After up to the cap', () => {
    expect(backoffDelay(policy, 1, 5000, () => 0)).toBe(5000);
    expect(backoffDelay(policy, 1, 60_000, () => 0)).toBe(8000);
    expect(parseRetryAfter('7', 0)).toBe(7000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
  });
});

describe('delivery configuration', () => {
  it('comes from the environment', () => {
    const options = optionsFromEnvironment({
      EXTSCOPE_WEBHOOK_URL: 'https://hooks.example.test/extscope',
      EXTSCOPE_WEBHOOK_SECRET: SECRET,
      EXTSCOPE_ALERTMANAGER_URL: 'http://am-1:9093, http://am-2:9093',
      EXTSCOPE_ALERTMANAGER_RESEND_SECONDS: '30',
      EXTSCOPE_PUBLIC_URL: 'https://extscope.example.test',
      EXTSCOPE_DELIVERY_MAX_ATTEMPTS: '4',
    });
    const { delivery } = resolveConfig({ dbPath: 'x.db', ...options });
    expect(delivery).toMatchObject({
      webhook: { url: 'https://hooks.example.test/extscope', secret: SECRET },
      alertmanagerUrls: ['http://am-1:9093', 'http://am-2:9093'],
      alertmanagerResendMs: 30_000,
      publicUrl: 'https://extscope.example.test',
      retry: { maxAttempts: 4 },
    });
  });

  it('refuses a webhook without a signing secret, a URL that is not http(s), and a resend interval that is not a number', () => {
    expect(() => resolveConfig({ dbPath: 'x.db', delivery: { webhookUrl: 'https://hooks.example.test' } })).toThrow(ConfigError);
    expect(() => resolveConfig({ dbPath: 'x.db', delivery: { webhookUrl: 'https://hooks.example.test', webhookSecret: 'short' } })).toThrow(
      /EXTSCOPE_WEBHOOK_SECRET/,
    );
    expect(() => resolveConfig({ dbPath: 'x.db', delivery: { alertmanagerUrls: ['ftp://am:9093'] } })).toThrow(/EXTSCOPE_ALERTMANAGER_URL/);
    expect(() => resolveConfig({ dbPath: 'x.db', ...optionsFromEnvironment({ EXTSCOPE_ALERTMANAGER_RESEND_SECONDS: 'often' }) })).toThrow(
      /EXTSCOPE_ALERTMANAGER_RESEND_SECONDS/,
    );
  });
});

describe('Alertmanager label names', () => {
  it('are made valid, and empty values are left out', () => {
    expect(labelSet({ alertname: 'x', 'extension.id': 'a/b', '9lives': 'v', gone: '', 'client name': '<b>"x"</b>' })).toEqual({
      alertname: 'x',
      extension_id: 'a/b',
      _9lives: 'v',
      client_name: '<b>"x"</b>',
    });
  });
});
