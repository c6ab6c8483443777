import { expect } from 'chai';
import { Writable } from 'node:stream';
import { createLogger } from '../../../shared/log.ts';
import { startGatewayService } from '../../../services/gateway/service.ts';
import { rawRequest } from '../../support/api.ts';
import { startTestSystem, TEST_TOKEN } from '../../support/embedded.ts';

/** One access line per API request, with the request id the client sent (or a new one), echoed back. */
describe('access log and request id', function () {
  this.timeout(30_000);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let gateway: Awaited<ReturnType<typeof startGatewayService>>;
  let base: string;
  const lines: any[] = [];
  before(async () => {
    system = await startTestSystem();
    const destination = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    // A second gateway on the same services, logging through the real logger into our stream.
    gateway = await startGatewayService({ clients: system.clients, rateLimit: { rate: 0, burst: 1 }, log: createLogger('gateway', {}, 'info', destination), host: '127.0.0.1', port: 0 });
    base = `http://${gateway.addresses.http}`;
  });
  after(async () => {
    await gateway.stop();
    await system.destroy();
  });
  const accessLines = () => lines.filter((l) => l.msg === 'api request');

  it('takes X-Request-Id from the client, echoes it and logs it with function, code and status', async () => {
    const r = await rawRequest(base, '/api/v1/cron_list', { method: 'GET', query: `token=${TEST_TOKEN}`, headers: { 'X-Request-Id': 'client-id.42' } });
    expect(r.http).to.equal(200);
    expect(r.headers.get('x-request-id')).to.equal('client-id.42');
    const line = accessLines().find((l) => l.requestId === 'client-id.42');
    expect(line).to.include({ level: 'info', service: 'gateway', method: 'GET', function: 'cron_list', code: 0, status: 200 });
    expect(line.ms).to.be.a('number');
    expect(line.accountId).to.equal('1');
    // The token travelled in the query: no line carries it.
    expect(JSON.stringify(lines)).not.to.include(TEST_TOKEN);
  });

  it('generates an id when none (or an unusable one) is sent, and logs failures too', async () => {
    const none = await rawRequest(base, '/api/v1/cron_get', { method: 'GET', query: 'id=1', headers: { authorization: 'Bearer nope' } });
    const generated = none.headers.get('x-request-id')!;
    expect(generated).to.match(/^[0-9a-f-]{36}$/);
    expect(accessLines().find((l) => l.requestId === generated)).to.include({ function: 'cron_get', status: 401 });
    const bad = await rawRequest(base, '/api/v1/cron_list', { method: 'GET', headers: { 'X-Request-Id': 'x'.repeat(200) } });
    expect(bad.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    const odd = await rawRequest(base, '/api/v1/cron_list', { method: 'GET', headers: { 'X-Request-Id': 'a b"c' } });
    expect(odd.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
  });
});
