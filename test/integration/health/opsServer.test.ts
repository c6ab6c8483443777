import { expect } from 'chai';
import { startOpsServer } from '../../../shared/opsServer.ts';

describe('ops server (/healthz, /readyz, /metrics)', () => {
  it('answers /healthz always, /readyz as ready() says (a throwing check is not ready), /metrics only when given', async () => {
    let ready: boolean | Error = false;
    const plain = await startOpsServer({
      host: '127.0.0.1',
      port: 0,
      ready: () => {
        if (ready instanceof Error) throw ready;
        return ready;
      },
    });
    const withMetrics = await startOpsServer({
      host: '127.0.0.1',
      port: 0,
      ready: async () => true,
      metrics: async () => ({ contentType: 'text/plain; version=0.0.4', body: 'tock_up 1\n' }),
    });
    const get = async (port: number, path: string, method = 'GET') => {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, { method });
      return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
    };
    try {
      expect((await get(plain.port, '/healthz')).status).to.equal(200);
      expect(await get(plain.port, '/readyz')).to.include({ status: 503, body: '{"status":"not ready"}' });
      ready = true;
      expect(await get(plain.port, '/readyz')).to.include({ status: 200, body: '{"status":"ready"}' });
      ready = new Error('store check threw');
      expect((await get(plain.port, '/readyz')).status).to.equal(503);
      expect((await get(plain.port, '/metrics')).status).to.equal(404);
      expect((await get(plain.port, '/nothing')).status).to.equal(404);
      expect((await get(plain.port, '/healthz', 'POST')).status).to.equal(405);
      expect(await get(withMetrics.port, '/metrics')).to.deep.equal({ status: 200, type: 'text/plain; version=0.0.4', body: 'tock_up 1\n' });
    } finally {
      await plain.stop();
      await withMetrics.stop();
    }
  });
});
