import { expect } from 'chai';
import { parseRetryAfter, RETRY_CAP_MS, retryDelayMs, shouldRetry } from '../../../services/executor/retryPolicy.ts';

const failed = (over: { error?: string; httpStatus?: number; transient?: boolean }) => ({ error: '', httpStatus: 0, transient: false, ...over });

describe('retry policy', () => {
  it('retries what may pass: no connection, timeouts, 5xx and 429', () => {
    expect(shouldRetry(failed({ error: 'connection refused by 10.0.0.1:80', transient: true }))).to.equal(true);
    expect(shouldRetry(failed({ error: 'timed out after 5 s waiting for the response', transient: true }))).to.equal(true);
    for (const status of [500, 502, 503, 504, 599, 429]) expect(shouldRetry(failed({ httpStatus: status })), String(status)).to.equal(true);
  });

  it('never retries other 4xx, a judged 2xx, a refused target or a bad URL', () => {
    for (const status of [400, 401, 403, 404, 410, 422, 200, 204, 301]) expect(shouldRetry(failed({ httpStatus: status })), String(status)).to.equal(false);
    expect(shouldRetry(failed({ error: 'target 10.0.0.1 is in a private network', transient: false }))).to.equal(false);
    expect(shouldRetry(failed({ error: 'too many redirects (more than 10)', transient: false }))).to.equal(false);
  });

  it('waits a uniform draw below an exponential step (full jitter), capped', () => {
    const none = { httpStatus: 500, retryAfter: null };
    expect(retryDelayMs(1, 10, none, 0, () => 0.5)).to.equal(5_000);
    expect(retryDelayMs(2, 10, none, 0, () => 0.5)).to.equal(10_000);
    expect(retryDelayMs(3, 10, none, 0, () => 0.999)).to.equal(39_960);
    expect(retryDelayMs(1, 10, none, 0, () => 0)).to.equal(0);
    expect(retryDelayMs(10, 3600, none, 0, () => 0.999)).to.be.below(RETRY_CAP_MS);
    expect(retryDelayMs(30, 3600, none, 0, () => 1)).to.equal(RETRY_CAP_MS);
  });

  it("honours a 429's or 503's Retry-After within the cap, in seconds or as a date", () => {
    const now = Date.parse('2026-11-23T10:00:00Z');
    expect(retryDelayMs(1, 1, { httpStatus: 429, retryAfter: '7' }, now, () => 0)).to.equal(7_000);
    expect(retryDelayMs(1, 1, { httpStatus: 503, retryAfter: 'Mon, 23 Nov 2026 10:00:30 GMT' }, now, () => 0)).to.equal(30_000);
    expect(retryDelayMs(1, 1, { httpStatus: 429, retryAfter: '999999' }, now, () => 0)).to.equal(RETRY_CAP_MS);
    expect(retryDelayMs(1, 1, { httpStatus: 500, retryAfter: '7' }, now, () => 0), 'only 429 and 503 are asked to wait').to.equal(0);
    expect(retryDelayMs(1, 100, { httpStatus: 429, retryAfter: '1' }, now, () => 0.5), 'a longer jittered wait stands').to.equal(50_000);
  });

  it('reads Retry-After leniently and refuses what it cannot read', () => {
    expect(parseRetryAfter(' 12 ', 0)).to.equal(12_000);
    expect(parseRetryAfter(undefined, 0)).to.equal(null);
    expect(parseRetryAfter('soon', 0)).to.equal(null);
    expect(parseRetryAfter('Mon, 23 Nov 2026 09:00:00 GMT', Date.parse('2026-11-23T10:00:00Z')), 'a past date: now').to.equal(0);
  });
});
