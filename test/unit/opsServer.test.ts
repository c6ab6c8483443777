import { expect } from 'chai';
import { startOpsServer } from '../../shared/opsServer.ts';

describe('ops server', () => {
  it('answers /readyz per ready() (a throw is not ready) and /metrics only when given', async () => {
    let ready: boolean | Error = false;
    const bare = await startOpsServer({
      host: '127.0.0.1',
      port: 0,
      ready: async () => {
        if (ready instanceof Error) throw ready;
        return ready;
      },
    });
    const withMetrics = await startOpsServer({ host: '127.0.0.1', port: 0, ready: () => true, metrics: async () => ({ contentType: 'text/plain; version=0.0.4', body: 'x_total 1\n' }) });
    try {
      const get = (port: number, path: string, method = 'GET') => fetch(`http://127.0.0.1:${port}${path}`, { method });
      expect((await get(bare.port, '/healthz')).status).to.equal(200);
      expect((await get(bare.port, '/readyz')).status).to.equal(503);
      ready = true;
      expect((await get(bare.port, '/readyz')).status).to.equal(200);
      ready = new Error('store down');
      expect((await get(bare.port, '/readyz')).status).to.equal(503);
      expect((await get(bare.port, '/metrics')).status).to.equal(404);
      expect((await get(bare.port, '/healthz', 'POST')).status).to.equal(405);
      const scraped = await get(withMetrics.port, '/metrics?x=1');
      expect(scraped.status).to.equal(200);
      expect(scraped.headers.get('content-type')).to.equal('text/plain; version=0.0.4');
      expect(await scraped.text()).to.equal('x_total 1\n');
    } finally {
      await bare.stop();
      await withMetrics.stop();
    }
  });
});
