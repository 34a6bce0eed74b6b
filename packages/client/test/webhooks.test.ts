import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../src/webhooks';

// Signed here with node:crypto, independently of the helper under test.
const sign = (secret: string, body: string | Buffer, t: number) =>
  crypto
    .createHmac('sha256', secret)
    .update(Buffer.concat([Buffer.from(`${t}.`), Buffer.from(body)]))
    .digest('hex');

const secret = 'whsec_test-secret-0123456789';
const body = '{"webhook_id":"wh_1","changes":[{"sequence":7}]}';
const t = 1_800_000_000;
const header = `t=${t},v1=${sign(secret, body, t)}`;

describe('verifyWebhookSignature', () => {
  it('accepts a delivery signed with the secret, within the tolerance', async () => {
    expect(await verifyWebhookSignature({ header, body, secret, now: t })).toBe(true);
    expect(await verifyWebhookSignature({ header, body, secret, now: t + 300 })).toBe(true);
    expect(await verifyWebhookSignature({ header, body, secret, now: t - 300 })).toBe(true);
  });

  it('refuses a changed body, another secret or a signature of another timestamp', async () => {
    expect(await verifyWebhookSignature({ header, body: body.replace('7', '8'), secret, now: t })).toBe(false);
    expect(await verifyWebhookSignature({ header, body, secret: `${secret}x`, now: t })).toBe(false);
    const moved = `t=${t + 1},v1=${sign(secret, body, t)}`;
    expect(await verifyWebhookSignature({ header: moved, body, secret, now: t })).toBe(false);
  });

  it('refuses a timestamp outside the tolerance (default 300 s, configurable)', async () => {
    expect(await verifyWebhookSignature({ header, body, secret, now: t + 301 })).toBe(false);
    expect(await verifyWebhookSignature({ header, body, secret, now: t - 301 })).toBe(false);
    expect(await verifyWebhookSignature({ header, body, secret, now: t + 301, toleranceSeconds: 600 })).toBe(true);
    expect(await verifyWebhookSignature({ header, body, secret, now: t + 11, toleranceSeconds: 10 })).toBe(false);
  });

  it('checks against the clock by default', async () => {
    const fresh = Math.floor(Date.now() / 1000);
    const current = `t=${fresh},v1=${sign(secret, body, fresh)}`;
    expect(await verifyWebhookSignature({ header: current, body, secret })).toBe(true);
    expect(await verifyWebhookSignature({ header, body, secret })).toBe(false);
  });

  it('verifies raw bytes, not a re-encoding of them', async () => {
    const bytes = Buffer.from('{"text":"caf\u00e9 \u2603"}', 'utf8');
    const signed = `t=${t},v1=${sign(secret, bytes, t)}`;
    expect(await verifyWebhookSignature({ header: signed, body: new Uint8Array(bytes), secret, now: t })).toBe(true);
    expect(await verifyWebhookSignature({ header: signed, body: bytes.toString('utf8'), secret, now: t })).toBe(true);
    expect(await verifyWebhookSignature({ header: signed, body: bytes.toString('latin1'), secret, now: t })).toBe(
      false,
    );
  });

  it('accepts when any of several v1 signatures matches (secret rotation)', async () => {
    const two = `t=${t},v1=${'0'.repeat(64)},v1=${sign(secret, body, t)}`;
    expect(await verifyWebhookSignature({ header: two, body, secret, now: t })).toBe(true);
  });

  it.each([
    ['no header', null],
    ['empty', ''],
    ['no timestamp', `v1=${sign(secret, body, t)}`],
    ['no signature', `t=${t}`],
    ['two timestamps', `t=${t},t=${t},v1=${sign(secret, body, t)}`],
    ['non-numeric timestamp', `t=soon,v1=${sign(secret, body, t)}`],
    ['short signature', `t=${t},v1=${sign(secret, body, t).slice(2)}`],
    ['non-hex signature', `t=${t},v1=${'z'.repeat(64)}`],
    ['no equals sign', `t${t},v1=${sign(secret, body, t)}`],
  ])('refuses a malformed header (%s)', async (_why, value) => {
    expect(await verifyWebhookSignature({ header: value, body, secret, now: t })).toBe(false);
  });

  it('refuses everything with an empty secret', async () => {
    const unkeyed = `t=${t},v1=${sign('', body, t)}`;
    expect(await verifyWebhookSignature({ header: unkeyed, body, secret: '', now: t })).toBe(false);
  });
});
