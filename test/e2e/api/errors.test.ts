import { expect } from 'chai';
import { AppError } from '../../../shared/errors.ts';
import type { Logger } from '../../../shared/log.ts';
import { startGatewayService } from '../../../services/gateway/service.ts';
import type { Clients } from '../../../services/gateway/functions.ts';
import { apiClient, fails, ok } from '../../support/api.ts';
import { TEST_TOKEN } from '../../support/embedded.ts';
import { embeddedTarget } from '../../support/targets.ts';

const REQUEST_ID = /request id ([0-9a-f-]{36})/;
/** Words that would give away how the service is built. */
const INTERNALS = /sqlite|cronjob-|group-|ECONNREFUSED|127\.0\.0\.1|grpc|stack|\.ts\b|database|locked|event store|service unavailable/i;

function capturingLogger(lines: { msg: string; fields?: Record<string, unknown> }[]): Logger {
  const logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: (msg, fields) => lines.push({ msg, fields }),
    error: (msg, fields) => lines.push({ msg, fields }),
    child: () => logger,
  };
  return logger;
}

describe('5xx answers never show internals', function () {
  this.timeout(60_000);

  it('a jobs service that is gone answers code 1 (HTTP 503, Retry-After) with a request id, nothing more', async () => {
    const target = await embeddedTarget();
    try {
      await ok(target.api.call('account_get'));
      await target.system.jobs.stop();
      const response = await target.api.call('cron_list');
      expect(response).to.include({ http: 503, status: 'error', code: 1 });
      expect(response.message).to.match(/^the service is busy or unavailable right now; retry in 1 second \(request id [0-9a-f-]{36}\)$/);
      expect(response.headers.get('retry-after')).to.equal('1');
      expect(response.message).not.to.match(INTERNALS);
      expect(response.headers.get('x-request-id')).to.equal(REQUEST_ID.exec(response.message!)![1]);
    } finally {
      await target.stop();
    }
  });

  describe('whatever a backend throws', () => {
    const logged: { msg: string; fields?: Record<string, unknown> }[] = [];
    let failure: unknown;
    let server: Awaited<ReturnType<typeof startGatewayService>>;
    let api: ReturnType<typeof apiClient>;

    before(async () => {
      const account = { id: 1n, name: 'a', timezone: 'UTC', jobLimit: 0, disabled: false, createdAt: 0n };
      // A jobs client whose every call but authentication fails the way the test says.
      const jobs = new Proxy({} as Clients['jobs'], {
        get: (_, name) => (name === 'authenticate' ? async () => account : name === 'close' ? () => {} : async () => Promise.reject(failure)),
      });
      server = await startGatewayService({ clients: { jobs }, rateLimit: { rate: 0, burst: 1 }, log: capturingLogger(logged), host: '127.0.0.1', port: 0 });
      api = apiClient(`http://${server.addresses.http}`, TEST_TOKEN);
    });
    after(() => server.stop());

    const cases: [string, unknown, number, number][] = [
      ['an internal AppError with details', new AppError('INTERNAL', 'event store (sqlite): SQLITE_CORRUPT at /var/lib/tock/events.db'), 1, 500],
      ['a peer that is unreachable', new AppError('UNAVAILABLE', 'service unavailable: 14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED 127.0.0.1:50051'), 1, 503],
      ['a busy store (another process holds the lock)', new AppError('UNAVAILABLE', 'event store (sqlite): database is locked'), 1, 503],
      ["a peer's rate limit", new AppError('RATE_LIMITED', 'rate limit exceeded on 127.0.0.1'), 12, 503],
      ['a conflict that outlived its retries', new AppError('CONFLICT', 'cronjob-17 is being changed by others right now; try again'), 1, 500],
      ['a plain Error', new Error('TypeError at services/jobs/jobsService.ts:120'), 1, 500],
      ['a thrown string', 'oops', 1, 500],
    ];
    for (const [what, error, code, http] of cases) {
      it(`${what}: code ${code}, HTTP ${http}, a plain sentence with a request id that is in the log`, async () => {
        failure = error;
        const response = await api.call('cron_get', { id: 17 });
        expect(response).to.include({ http, code, status: 'error' });
        expect(response.message).not.to.match(INTERNALS);
        const id = REQUEST_ID.exec(response.message!)?.[1];
        expect(id, response.message).to.be.a('string');
        expect(logged.some((l) => l.fields?.requestId === id), 'the cause is logged with the same id').to.equal(true);
        // Every 503 says when to come back; nothing else does.
        expect(response.headers.get('retry-after')).to.equal(http === 503 ? '1' : null);
      });
    }

    it('4xx answers keep their message (they are written for the client)', async () => {
      failure = new AppError('NOT_FOUND', 'cron job 17 not found');
      expect(await fails(api.call('cron_get', { id: 17 }), 5)).to.equal('cron job 17 not found');
    });
  });
});

describe('the error code table of docs/api.md (Responses) (embedded mode)', function () {
  this.timeout(60_000);

  it('answers each code with its HTTP status', async () => {
    const target = await embeddedTarget();
    try {
      const { api } = target;
      const job = await ok(api.call('cron_add', { url: 'https://example.com/codes', expression: 'manual' }));
      await ok(api.call('cron_disable', { id: job.id }));
      await fails(api.call('cron_nothing'), 2, 404);
      await fails(api.call('cron_add', { url: 'https://example.com', timeout: 1 }), 3, 400);
      await fails(api.call('cron_add', {}), 4, 400);
      await fails(api.call('cron_get', { id: 5555 }), 5, 404);
      await fails(api.call('cron_run', { id: job.id }), 6, 409);
      await fails(api.call('cron_batch_delete', { id: Array.from({ length: 1001 }, (_, i) => i + 1) }), 7, 400);
      await fails(apiClient(target.baseUrl, 'q'.repeat(32)).call('cron_list'), 11, 401);
      const malformed = await api.raw('cron_list', { headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' }, body: '{' });
      expect([malformed.http, malformed.json.code]).to.deep.equal([400, 13]);
      const huge = await api.raw('cron_list', { headers: { authorization: `Bearer ${TEST_TOKEN}` }, body: 'x='.padEnd(1024 * 1024 + 2, 'x') });
      expect([huge.http, huge.json.code]).to.deep.equal([413, 13]);
      const longUrl = await api.raw('cron_list', { method: 'GET', query: `token=${TEST_TOKEN}&keyword=${'k'.repeat(20_000)}` });
      expect([longUrl.http, longUrl.json?.code, longUrl.json?.status]).to.deep.equal([413, 13, 'error']);
    } finally {
      await target.stop();
    }
  });
});
