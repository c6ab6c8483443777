import { expect } from 'chai';
import { rawRequest } from '../support/api.ts';
import { startTestSystem } from '../support/embedded.ts';

/** TOCK_DASHBOARD=off: the gateway serves no dashboard and no redirect to it (no browser needed). */
describe('dashboard turned off (TOCK_DASHBOARD=off)', () => {
  it('serves neither the page nor the redirect; the API is unchanged', async () => {
    const system = await startTestSystem({ env: { TOCK_DASHBOARD: 'off' } });
    try {
      for (const path of ['/', '/dashboard/', '/dashboard/app.js']) {
        const response = await rawRequest(system.baseUrl, path, { method: 'GET' });
        expect(response.http, path).to.equal(404);
        expect(response.json, path).to.include({ status: 'error', code: 2 });
      }
      expect((await system.api.call('account_get')).status).to.equal('success');
    } finally {
      await system.destroy();
    }
  });
});
