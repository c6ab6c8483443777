import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiClient, ok } from '../support/api.ts';
import { serviceCommand } from '../support/build.ts';
import { startTestSystem, TEST_TOKEN } from '../support/embedded.ts';

describe('vertical slice: cron_add and cron_get through gateway -> gRPC -> jobs -> event store', () => {
  it('adds a job and reads it back with the spec envelope', async () => {
    const system = await startTestSystem();
    try {
      const added = await system.api.call('cron_add', { url: 'example.com/ping', expression: '*/5 * * * *', name: 'ping' });
      expect(added.http).to.equal(200);
      expect(added).to.include({ status: 'success', code: 0 });
      expect(added.data).to.include({ url: 'http://example.com/ping', expression: '*/5 * * * *', name: 'ping', status: 0, fail: 0, timezone: 'UTC' });
      expect(added.data.id).to.be.a('number');
      const got = await system.api.call('cron_get', { id: added.data.id }, { method: 'GET' });
      expect(got.data).to.deep.equal(added.data);
    } finally {
      await system.destroy();
    }
  });

  it('answers a bad token with code 11 and a missing job with code 5', async () => {
    const system = await startTestSystem();
    try {
      const bad = await apiClient(system.baseUrl, 'x'.repeat(32)).call('cron_get', { id: 1 });
      expect(bad).to.include({ http: 401, status: 'error', code: 11 });
      expect(bad.message).to.equal('Invalid API token, user not found.');
      const missing = await system.api.call('cron_get', { id: 999 });
      expect(missing).to.include({ http: 404, status: 'error', code: 5 });
      expect(missing.message).to.contain('999');
    } finally {
      await system.destroy();
    }
  });

  it('keeps the job across a restart: the read model is rebuilt from the event store', async () => {
    const first = await startTestSystem();
    const added: any = await ok(first.api.call('cron_add', { url: 'https://example.com/a', expression: '0 3 * * *' }));
    await first.stop();
    const second = await startTestSystem({ dataDir: first.dataDir });
    try {
      expect(second.bootstrapToken).to.equal(null);
      expect(await ok(second.api.call('cron_get', { id: added.id }))).to.deep.equal(added);
    } finally {
      await second.destroy();
    }
  });
});

describe('the start command (embedded mode as a real process)', function () {
  this.timeout(60_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-start-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  const start = (env: Record<string, string>) =>
    new Promise<{ child: ChildProcess; port: number; output: string[] }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'services/embedded/main.ts'], {
        env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', OPS_PORT: '0', LOG_LEVEL: 'warn', TOCK_RATE_LIMIT: '0', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const output: string[] = [];
      child.stdout.on('data', (chunk) => {
        output.push(String(chunk));
        const port = /Tock is running: http:\/\/[^:]+:(\d+)/.exec(output.join(''))?.[1];
        if (port) resolve({ child, port: Number(port), output });
      });
      child.stderr.on('data', (chunk) => output.push(String(chunk)));
      child.on('exit', (code) => reject(new Error(`exited with ${code}: ${output.join('')}`)));
    });

  it('prints the first token once, serves the API, and keeps jobs after kill -9 and restart', async () => {
    const first = await start({});
    const token = /API token, shown only this once: ([A-Za-z0-9]{32})/.exec(first.output.join(''))?.[1];
    expect(token, first.output.join('')).to.be.a('string');
    const api = apiClient(`http://127.0.0.1:${first.port}`, token!);
    const added: any = await ok(api.call('cron_add', { url: 'http://example.com/x', expression: '@hourly' }));
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    const second = await start({});
    try {
      expect(second.output.join('')).not.to.contain('shown only this once');
      const again = apiClient(`http://127.0.0.1:${second.port}`, token!);
      expect(await ok(again.call('cron_get', { id: added.id }))).to.deep.equal(added);
    } finally {
      second.child.kill('SIGTERM');
      await new Promise((r) => second.child.once('exit', r));
    }
  });

  it('fails fast with one line per bad setting', async () => {
    const child = spawn(process.execPath, serviceCommand('embedded'), {
      env: { ...process.env, DATA_DIR: dataDir, PORT: 'x', TOCK_BOOTSTRAP_TOKEN: TEST_TOKEN.slice(1) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const code = await new Promise((r) => child.on('exit', r));
    expect(code).to.equal(1);
    expect(stderr.trim().split('\n')).to.have.length(2);
    expect(stderr).to.contain('config error: PORT');
    expect(stderr).to.contain('config error: TOCK_BOOTSTRAP_TOKEN');
  });
});
