import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface VerifiedRequest {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The names of the secrets under which the npm standardwebhooks library accepted it. */
  standard: string[];
  /** The names of the secrets under which X-Tock-Signature checks out (written from docs/api.md, not Tock's code). */
  tock: string[];
}

function tockVerifies(header: string, body: string, secret: string): boolean {
  const parts = header.split(',').map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)] as const);
  const t = parts.find(([k]) => k === 't')?.[1];
  if (!t || Math.abs(Date.now() / 1000 - Number(t)) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return parts.some(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v) && timingSafeEqual(Buffer.from(v, 'hex'), expected));
}

/**
 * A webhook receiver as a user would write one: every request is checked at arrival with the npm
 * `standardwebhooks` library (its own clock judges the timestamp) against each named secret the
 * test holds now (it may add or drop some), and with a check of X-Tock-Signature. It answers 200
 * when some secret verified the Standard Webhooks signature, 401 otherwise, unless `answer`
 * says another status for the n-th request.
 */
export async function startWebhookReceiver(
  secrets: { standard: Record<string, string>; tock: Record<string, string> },
  answer: (n: number) => number | undefined = () => undefined,
) {
  const received: VerifiedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const headers = req.headers;
      const standard = Object.entries(secrets.standard)
        .filter(([, secret]) => {
          try {
            new Webhook(secret).verify(body, headers as Record<string, string>);
            return true;
          } catch {
            return false;
          }
        })
        .map(([name]) => name);
      const tock = Object.entries(secrets.tock)
        .filter(([, secret]) => tockVerifies(String(headers['x-tock-signature'] ?? ''), body, secret))
        .map(([name]) => name);
      received.push({ url: req.url!, headers, body, standard, tock });
      res.writeHead(answer(received.length) ?? (standard.length ? 200 : 401), { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}
