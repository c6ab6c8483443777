import { Validator } from '@seriousme/openapi-schema-validator';
import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import { createGateway } from '../../services/gateway/app.ts';
import { FUNCTIONS, type Clients } from '../../services/gateway/functions.ts';
import { openApiDocument } from '../../services/gateway/openapi.ts';
import { JOB_SETTINGS } from '../../services/gateway/openapiSchema.ts';
import { JobSettingsSchema } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { createLogger } from '../../shared/log.ts';

describe('the OpenAPI document of /api/v1', () => {
  const doc = openApiDocument();

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)).to.deep.equal([]);
    expect(result.valid).to.equal(true);
  });

  it('describes every function the gateway serves, and nothing else', () => {
    const described = Object.keys(doc.paths).filter((p) => p.startsWith('/api/v1/')).map((p) => p.replace('/api/v1/', '')).sort();
    expect(described).to.deep.equal(Object.keys(FUNCTIONS).sort());
  });

  it("describes the badge URL as the one path outside /api/v1, open without a token", () => {
    expect(Object.keys(doc.paths).filter((p) => !p.startsWith('/api/v1/'))).to.deep.equal(['/badge/{token}.svg']);
    expect((doc.paths['/badge/{token}.svg'] as { get: { security: unknown } }).get.security).to.deep.equal([]);
  });

  it('describes every job setting the jobs service takes', () => {
    const settings = JobSettingsSchema.fields.map((f) => f.localName).sort();
    expect(Object.keys(JOB_SETTINGS).sort()).to.deep.equal(settings);
  });

  it('is served at /api/v1/openapi.json without a token', async () => {
    const app = createGateway({ clients: {} as Clients, rateLimit: { rate: 0, burst: 1 }, log: createLogger('test', {}, 'silent') });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/openapi.json`);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/application\/json/);
      expect(await res.json()).to.deep.equal(JSON.parse(JSON.stringify(doc)));
    } finally {
      server.close();
    }
  });
});
