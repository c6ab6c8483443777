import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fails, ok, rawRequest, type ApiClient } from '../../support/api.ts';
import { embeddedTarget, inBothModes, streamEvents, type ApiTarget } from '../../support/targets.ts';
import { YEARLY } from '../../support/jobFixtures.ts';
import { startTestSystem } from '../../support/embedded.ts';
import { startTarget } from '../../support/target.ts';
import { waitFor } from '../../support/waitFor.ts';

/**
 * A well-formed XML document of elements, attributes and text, and nothing else: every tag closed
 * in order, no raw '<' or bare '&' in text or attribute values, no script, no processing
 * instruction, no comment. Enough to say a job name cannot break the SVG or add markup to it.
 */
export function checkSvgMarkup(svg: string) {
  const stack: string[] = [];
  const ENTITY = /&(?:amp|lt|gt|quot|#39);/g;
  const clean = (text: string, where: string) => expect(text.replace(ENTITY, ''), where).not.to.match(/[<>&]/);
  let rest = svg;
  while (rest.length) {
    const open = rest.indexOf('<');
    if (open < 0) {
      clean(rest, 'trailing text');
      break;
    }
    clean(rest.slice(0, open), 'text');
    const close = rest.indexOf('>', open);
    expect(close, 'an unclosed tag').to.be.greaterThan(open);
    const tag = rest.slice(open + 1, close);
    rest = rest.slice(close + 1);
    const m = /^(\/?)([a-zA-Z][\w-]*)((?:\s+[\w:-]+="[^"<&]*(?:&(?:amp|lt|gt|quot|#39);[^"<&]*)*")*)\s*(\/?)$/.exec(tag);
    expect(m, `a malformed tag <${tag}>`).to.not.equal(null);
    const [, closing, name, , selfClosing] = m!;
    expect(name!.toLowerCase(), 'an element the badge must not have').not.to.be.oneOf(['script', 'foreignobject', 'a', 'image', 'use', 'iframe', 'style']);
    expect(tag, 'an event handler').not.to.match(/\son\w+=/i);
    if (closing) expect(stack.pop(), `</${name}> closes the element open`).to.equal(name);
    else if (!selfClosing) stack.push(name!);
  }
  expect(stack, 'elements left open').to.deep.equal([]);
}

const textsOf = (svg: string) => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
const get = (target: ApiTarget, path: string, headers: Record<string, string> = {}) => rawRequest(target.baseUrl, path, { method: 'GET', headers });

inBothModes('status badges: cron_badge, cron_badge_revoke and GET /badge/<token>.svg', (target) => {
  let api: ApiClient;
  before(() => {
    api = target().api;
  });

  it('gives the owner an unguessable URL that answers an SVG without a token, the same one when asked again', async () => {
    const job = await ok(api.call('cron_add', { url: 'https://example.com/b', expression: YEARLY, name: 'nightly backup' }));
    const badge = await ok(api.call('cron_badge', { id: job.id }));
    expect(badge.token).to.match(/^[A-Za-z0-9_-]{32}$/);
    expect(Buffer.from(badge.token, 'base64url')).to.have.length(24);
    expect(badge).to.include({ id: job.id, path: `/badge/${badge.token}.svg`, url: `${target().baseUrl}/badge/${badge.token}.svg` });
    expect(badge.markdown).to.equal(`![nightly backup](${badge.url})`);
    expect(await ok(api.call('cron_badge', { id: job.id }))).to.deep.equal(badge);

    const res = await get(target(), badge.path);
    expect(res.http).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('image/svg+xml; charset=utf-8');
    expect(res.headers.get('cache-control')).to.equal('public, max-age=60');
    expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(res.text).to.match(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    checkSvgMarkup(res.text);
    // The API process has no logs service in distributed mode here: the state comes from the job alone.
    expect(textsOf(res.text)).to.deep.equal(['nightly backup', 'nightly backup', 'pending', 'pending']);
    // Cacheable: a client that has it gets 304 (fetch would add no-cache to a conditional request of its own).
    const again = await get(target(), badge.path, { 'if-none-match': res.headers.get('etag')!, 'cache-control': 'max-age=0' });
    expect(again.http).to.equal(304);

    // Two badges never share a token.
    const other = await ok(api.call('cron_add', { url: 'https://example.com/c', expression: YEARLY }));
    expect((await ok(api.call('cron_badge', { id: other.id }))).token).not.to.equal(badge.token);
  });

  it('keeps the token sealed at rest (only cron_badge shows it) and masks it in cron_history', async () => {
    const job = await ok(api.call('cron_add', { url: 'https://example.com/s', expression: YEARLY }));
    const { token } = await ok(api.call('cron_badge', { id: job.id }));
    const stored = streamEvents(target().dataDir, `cronjob-${job.id}`).find((e) => e.type === 'BadgeIssued')!;
    expect(stored.data.token).to.match(/^enc:/);
    expect(JSON.stringify(stored)).not.to.contain(token);
    const history = await ok<any[]>(api.call('cron_history', { id: job.id }));
    expect(history[0]).to.include({ type: 'BadgeIssued', version: null });
    expect(history[0].data.token).to.equal('********');
    expect(JSON.stringify(history)).not.to.contain(token);
  });

  it('escapes the job name: markup, ampersands and quotes neither break the SVG nor add to it', async () => {
    const name = `<script>alert("x")</script> & 'q' </text><a href="//evil">`;
    const job = await ok(api.call('cron_add', { url: 'https://example.com/e', expression: YEARLY, name }));
    const { path, markdown } = await ok(api.call('cron_badge', { id: job.id }));
    const { text } = await get(target(), path);
    checkSvgMarkup(text);
    expect(text).not.to.contain('<script');
    expect(text).not.to.contain('<a ');
    const label = textsOf(text)[0]!;
    // Cut to 40 characters (the 40th an ellipsis), then escaped.
    expect(label).to.equal('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39; &lt;/tex…');
    expect(markdown).to.match(/^!\[<script>alert\("x"\)<\/script> & 'q' <\/tex…\]\(/);
    // Control characters are dropped (XML cannot hold them); an empty name reads "cron".
    const plain = await ok(api.call('cron_add', { url: 'https://example.com/e2', expression: YEARLY, name: 'a\u0001b' }));
    expect(textsOf((await get(target(), (await ok(api.call('cron_badge', { id: plain.id }))).path)).text)[0]).to.equal('ab');
    const nameless = await ok(api.call('cron_add', { url: 'https://example.com/e3', expression: YEARLY }));
    expect(textsOf((await get(target(), (await ok(api.call('cron_badge', { id: nameless.id }))).path)).text)[0]).to.equal('cron');
  });

  it('revoked: the URL answers 404 at once, and a new badge has a new token', async () => {
    const job = await ok(api.call('cron_add', { url: 'https://example.com/r', expression: YEARLY }));
    const first = await ok(api.call('cron_badge', { id: job.id }));
    expect((await get(target(), first.path)).http).to.equal(200);
    expect(await ok(api.call('cron_badge_revoke', { id: job.id }))).to.deep.equal({ id: job.id, revoked: true });
    const gone = await get(target(), first.path);
    expect(gone.http).to.equal(404);
    expect(gone.headers.get('cache-control')).to.equal('no-store');
    expect(gone.json).to.include({ status: 'error', code: 5 });
    // Revoking again changes nothing and says so.
    expect(await ok(api.call('cron_badge_revoke', { id: job.id }))).to.deep.equal({ id: job.id, revoked: false });
    const second = await ok(api.call('cron_badge', { id: job.id }));
    expect(second.token).not.to.equal(first.token);
    expect((await get(target(), second.path)).http).to.equal(200);
    expect((await get(target(), first.path)).http).to.equal(404);
  });

  it('deleting the job ends its badge', async () => {
    const job = await ok(api.call('cron_add', { url: 'https://example.com/d', expression: YEARLY }));
    const { path } = await ok(api.call('cron_badge', { id: job.id }));
    await ok(api.call('cron_delete', { id: job.id }));
    expect((await get(target(), path)).http).to.equal(404);
    await fails(api.call('cron_badge', { id: job.id }), 5);
  });

  it('answers 404 to unknown and malformed tokens, and the functions refuse another account\'s job and a missing token', async () => {
    for (const path of ['/badge/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.svg', '/badge/short.svg', '/badge/..%2F..%2Fapi.svg', `/badge/${'A'.repeat(32)}`]) {
      expect((await get(target(), path)).http, path).to.equal(404);
    }
    const job = await ok(api.call('cron_add', { url: 'https://example.com/o', expression: YEARLY }));
    const { path } = await ok(api.call('cron_badge', { id: job.id }));
    const mallory = await target().newAccount();
    expect(await fails(mallory.call('cron_badge', { id: job.id }), 5)).to.match(/not found/);
    await fails(mallory.call('cron_badge_revoke', { id: job.id }), 5);
    expect((await get(target(), path)).http).to.equal(200);
    const anonymous = await rawRequest(target().baseUrl, '/api/v1/cron_badge', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: job.id }) });
    expect(anonymous.http).to.equal(401);
    expect(await fails(api.call('cron_badge', {}), 4)).to.match(/^id: /);
  });
});

describe('status badges follow the job (embedded, real runs)', function () {
  this.timeout(60_000);
  let system: Awaited<ReturnType<typeof embeddedTarget>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let fail = false;
  before(async () => {
    target = await startTarget(() => (fail ? { status: 500, body: 'down' } : { body: 'fine' }));
    system = await embeddedTarget({ TOCK_ALLOW_NETWORKS: '127.0.0.0/8' });
  });
  after(async () => {
    await system?.stop();
    await target?.close();
  });

  const stateOf = async (path: string) => textsOf((await get(system, path)).text)[2];
  const runOnce = async (id: number) => {
    const before = (await ok<any[]>(system.api.call('cron_logs', { id }))).length;
    await ok(system.api.call('cron_run', { id }));
    await waitFor(async () => (await ok<any[]>(system.api.call('cron_logs', { id }))).length > before, `a result of job ${id}`, 15_000);
  };

  it('pending, ok after a successful run, failing after a failed one, then paused and disabled', async () => {
    const job = await ok(system.api.call('cron_add', { url: `${target.url}/job`, expression: 'manual', name: 'sync' }));
    const { path } = await ok(system.api.call('cron_badge', { id: job.id }));
    expect(await stateOf(path)).to.equal('pending');
    await runOnce(job.id);
    expect(await stateOf(path)).to.equal('ok');
    fail = true;
    await runOnce(job.id);
    expect(await stateOf(path)).to.equal('failing');
    expect((await get(system, path)).text).to.contain('fill="#e05d44"');
    await ok(system.api.call('cron_pause', { id: job.id }));
    expect(await stateOf(path)).to.equal('paused');
    await ok(system.api.call('cron_disable', { id: job.id }));
    expect(await stateOf(path)).to.equal('disabled');
    // A badge is no setting: it survives an edit and a re-enable.
    await ok(system.api.call('cron_edit', { id: job.id, name: 'sync2' }));
    await ok(system.api.call('cron_enable', { id: job.id }));
    expect(textsOf((await get(system, path)).text).slice(0, 1)).to.deep.equal(['sync2']);
  });
});

describe('status badges survive a restart (embedded, the view rebuilt from the event store)', function () {
  this.timeout(60_000);
  let system: Awaited<ReturnType<typeof startTestSystem>> | undefined;
  after(() => system?.destroy());

  it('serves the same URL after a restart; a URL revoked before it stays 404', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tock-badge-restart-'));
    system = await startTestSystem({ dataDir });
    const kept = await ok(system.api.call('cron_add', { url: 'https://example.com/kept', expression: YEARLY, name: 'kept' }));
    const keptBadge = await ok(system.api.call('cron_badge', { id: kept.id }));
    const gone = await ok(system.api.call('cron_add', { url: 'https://example.com/gone', expression: YEARLY }));
    const goneBadge = await ok(system.api.call('cron_badge', { id: gone.id }));
    await ok(system.api.call('cron_badge_revoke', { id: gone.id }));
    await system.stop();
    system = await startTestSystem({ dataDir });
    expect((await rawRequest(system.baseUrl, keptBadge.path, { method: 'GET' })).http).to.equal(200);
    expect((await ok(system.api.call('cron_badge', { id: kept.id }))).token).to.equal(keptBadge.token);
    expect((await rawRequest(system.baseUrl, goneBadge.path, { method: 'GET' })).http).to.equal(404);
  });
});
