// A minimal receiver for the service's webhooks, with no dependencies (Node 20+):
//   WEBHOOK_SECRET=whsec_... PORT=8787 node examples/webhook-receiver.mjs
// It checks `Tms-Signature` on the raw body, refuses stale or forged deliveries with 401, and
// handles each change once: deliveries are at least once, so a batch may arrive again.
import crypto from 'node:crypto';
import http from 'node:http';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('set WEBHOOK_SECRET to the secret webhooks.create showed');
  process.exit(2);
}
const port = Number(process.env.PORT ?? 8787);
const TOLERANCE_SECONDS = 300;

/** True when one `v1` of the header is the HMAC-SHA256 of "<t>.<body>" and `t` is recent. */
function verify(header, body) {
  const parts = new Map();
  const v1 = [];
  for (const part of String(header ?? '').split(',')) {
    const [key, value] = part.split('=', 2);
    if (key === 'v1') v1.push(value);
    else parts.set(key, value);
  }
  const t = Number(parts.get('t'));
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > TOLERANCE_SECONDS) return false;
  const expected = crypto.createHmac('sha256', secret).update(`${t}.`).update(body).digest();
  return v1.some((hex) => {
    const given = Buffer.from(hex ?? '', 'hex');
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
}

// The last sequence handled. Keep it in your own database, in the same transaction as the
// work a change causes, to resume exactly after a restart.
let lastSequence = 0;

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    if (req.method !== 'POST' || !verify(req.headers['tms-signature'], body)) {
      res.writeHead(401).end();
      return;
    }
    const { webhook_id: webhookId, changes } = JSON.parse(body.toString('utf8'));
    for (const change of changes) {
      if (change.sequence <= lastSequence) continue; // seen before: a redelivery
      const subjects = change.subjects.map((s) => `${s.type}:${s.id}`).join(' ');
      console.log(`${webhookId} change ${change.sequence} ${change.operation} ${subjects}`);
      lastSequence = change.sequence;
    }
    // Answer 2xx quickly; anything else (or no answer within 10 s) is retried.
    res.writeHead(204).end();
  });
});

server.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
