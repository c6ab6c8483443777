import { expect } from 'chai';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { request } from 'undici';
import { startTestSystem } from '../support/embedded.ts';
import Koa from 'koa';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { publicAnswers } from '../../services/gateway/publicAnswers.ts';

/** undici's request: no automatic decompression, so what went over the wire is what we see. */
const get = async (url: string, headers: Record<string, string> = {}) => {
  const r = await request(url, { headers });
  const body = Buffer.from(await r.body.arrayBuffer());
  return { status: r.statusCode, headers: r.headers, body };
};

describe('answers without a token: compressed, cacheable, limited per address (embedded gateway)', function () {
  this.timeout(60_000);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  before(async () => {
    system = await startTestSystem({ env: { TOCK_RATE_LIMIT: '1/1' } });
  });
  after(() => system.destroy());

  it('compresses /api/v1/openapi.json as the client accepts: brotli, gzip, or not at all', async () => {
    const url = `${system.baseUrl}/api/v1/openapi.json`;
    const plain = await get(url, { 'accept-encoding': 'identity' });
    expect(plain.status).to.equal(200);
    expect(plain.headers['content-encoding']).to.equal(undefined);
    const document = plain.body.toString();
    expect(JSON.parse(document)).to.have.property('openapi');

    const br = await get(url, { 'accept-encoding': 'br' });
    expect(br.headers['content-encoding']).to.equal('br');
    expect(brotliDecompressSync(br.body).toString()).to.equal(document);
    expect(br.body.length).to.be.below(plain.body.length / 4);

    const gzip = await get(url, { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).to.equal('gzip');
    expect(gunzipSync(gzip.body).toString()).to.equal(document);
  });

  it('answers 304 without a body to a client holding the ETag, of the document and of the dashboard', async () => {
    for (const path of ['/api/v1/openapi.json', '/dashboard/']) {
      const first = await get(`${system.baseUrl}${path}`);
      const tag = first.headers['etag'];
      expect(tag, path).to.be.a('string');
      const again = await get(`${system.baseUrl}${path}`, { 'if-none-match': String(tag) });
      expect(again.status, path).to.equal(304);
      expect(again.body.length, path).to.equal(0);
    }
  });

  it("limits a badge's URL per address like the other answers without a token", async () => {
    const job = await system.api.call('cron_add', { url: 'https://example.com/badge', expression: '0 0 1 1 *' });
    expect(job.status, JSON.stringify(job)).to.equal('success');
    // The API token's own limit (1/s here) is not under test: the badge is issued over gRPC.
    const { token } = await system.jobsClient.issueBadge({ accountId: 1n, id: BigInt(job.data.id) });
    // A burst (30 at the least, less what the tests before took), then a refusal once requests
    // come faster than the 10 a second that come back: asked until it comes, however slow the
    // machine. Last in this suite: it spends the address's bucket.
    const statuses: number[] = [];
    while (statuses.length < 500 && !statuses.includes(503)) statuses.push((await get(`${system.baseUrl}/badge/${token}.svg`)).status);
    expect(statuses.slice(0, 20)).to.deep.equal(Array(20).fill(200));
    expect(statuses.at(-1), `after ${statuses.length} requests`).to.equal(503);
    expect(statuses.slice(0, -1).every((s) => s === 200), 'only 200s before it').to.equal(true);
  });
});

describe('publicAnswers: the limit per address (a real Koa server, the clock frozen)', () => {
  it('serves a burst, then refuses with the usual envelope and Retry-After, per address', async () => {
    const app = new Koa();
    app.use(publicAnswers({ rate: 1, burst: 1 }, () => 1_000_000, (ctx, error) => {
      ctx.status = error.httpStatus;
      ctx.set('Retry-After', String(error.retryAfter));
      ctx.body = { status: 'error', code: error.code, message: error.message };
    }));
    app.use((ctx) => {
      ctx.body = 'x'.repeat(4096);
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const answers = [];
      for (let i = 0; i < 31; i++) answers.push(await get(url, { 'accept-encoding': 'gzip' }));
      // With the clock frozen no token comes back: the burst (30 at the least) and no more.
      expect(answers.slice(0, 30).map((a) => a.status)).to.deep.equal(Array(30).fill(200));
      const refused = answers[30]!;
      expect(refused.status).to.equal(503);
      expect(JSON.parse(refused.body.toString())).to.deep.include({ status: 'error', code: 12 });
      expect(Number(refused.headers['retry-after'])).to.be.at.least(1);
    } finally {
      server.close();
    }
  });
});
