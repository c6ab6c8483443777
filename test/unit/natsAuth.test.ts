import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsAuth } from '../../shared/bus/natsAuth.ts';
import { type ConfigError, loadConfig } from '../../shared/config.ts';

describe('NATS credentials from the configuration', () => {
  it('user and password (inline or from a file), each service on its own inbox prefix', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tock-nats-auth-'));
    try {
      writeFileSync(join(dir, 'password'), 'pSecret\n');
      expect(natsAuth(loadConfig({ NATS_USER: 'planner', NATS_PASSWORD: 'pInline' }), 'planner')).to.deep.equal({ inboxPrefix: '_INBOX_planner', user: 'planner', pass: 'pInline' });
      expect(natsAuth(loadConfig({ NATS_USER: 'logs', NATS_PASSWORD_FILE: join(dir, 'password') }), 'logs')).to.deep.equal({ inboxPrefix: '_INBOX_logs', user: 'logs', pass: 'pSecret' });
      expect(natsAuth(loadConfig({ NATS_TOKEN: 'tok' }), 'jobs')).to.deep.equal({ inboxPrefix: '_INBOX_jobs', token: 'tok' });
      expect(natsAuth(loadConfig({}), 'executor')).to.deep.equal({ inboxPrefix: '_INBOX_executor' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses half a user, two kinds at once, and an unreadable file, naming the variable', () => {
    const problems = (env: Record<string, string>) => {
      try {
        natsAuth(loadConfig(env), 'jobs');
        return [];
      } catch (error) {
        return (error as ConfigError).problems;
      }
    };
    expect(problems({ NATS_USER: 'jobs' })).to.deep.equal(['NATS_PASSWORD: required with NATS_USER (or NATS_PASSWORD_FILE)']);
    expect(problems({ NATS_PASSWORD: 'x' })).to.deep.equal(['NATS_USER: required with NATS_PASSWORD']);
    expect(problems({ NATS_USER: 'jobs', NATS_PASSWORD: 'x', NATS_TOKEN: 't' })[0]).to.contain('use one of');
    expect(problems({ NATS_CREDS: '/nowhere/tock.creds' })).to.deep.equal(['NATS_CREDS: cannot read /nowhere/tock.creds (ENOENT)']);
  });
});
