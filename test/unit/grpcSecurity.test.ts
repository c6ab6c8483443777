import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../shared/config.ts';
import { grpcCredentials } from '../../shared/grpc/grpcSecurity.ts';
import type { Logger } from '../../shared/log.ts';

/** A logger that keeps its warnings, to check what an operator is told. */
function recordingLog() {
  const warnings: string[] = [];
  const log: Logger = { debug() {}, info() {}, error() {}, warn: (msg) => void warnings.push(msg), child: () => log };
  return { log, warnings };
}

const problemsOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
};

describe('gRPC credentials from the configuration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tock-grpc-sec-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const TOKEN = 'service-token-0123456789';
  const ADMIN = 'admin-token-0123456789ab';

  it('takes the tokens inline or from files (a mounted Secret, trailing newline trimmed)', () => {
    writeFileSync(join(dir, 'token'), `${TOKEN}\n`);
    writeFileSync(join(dir, 'admin'), `${ADMIN}\n`);
    const config = loadConfig({ TOCK_GRPC_TOKEN_FILE: join(dir, 'token'), TOCK_ADMIN_TOKEN_FILE: join(dir, 'admin') });
    const { log, warnings } = recordingLog();
    expect(grpcCredentials(config, 'service', log)).to.deep.equal({ tls: undefined, token: TOKEN });
    expect(grpcCredentials(config, 'admin', log)).to.deep.equal({ tls: undefined, token: ADMIN });
    expect(grpcCredentials(loadConfig({ TOCK_GRPC_TOKEN: TOKEN }), 'service', log).token).to.equal(TOKEN);
    expect(warnings).to.deep.equal([]);
  });

  it('refuses to run with nothing, naming what to set; TOCK_GRPC_INSECURE=1 runs open and warns', () => {
    const { log, warnings } = recordingLog();
    expect(problemsOf(() => grpcCredentials(loadConfig({}), 'service', log))[0]).to.match(/^TOCK_GRPC_TOKEN: gRPC needs credentials: set TOCK_GRPC_TLS_CA/);
    expect(problemsOf(() => grpcCredentials(loadConfig({ TOCK_GRPC_TOKEN: TOKEN }), 'admin', log))[0]).to.match(/^TOCK_ADMIN_TOKEN: required/);
    expect(grpcCredentials(loadConfig({ TOCK_GRPC_INSECURE: '1' }), 'service', log)).to.deep.equal({ tls: undefined });
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.match(/NOT authenticated/);
  });

  it('refuses an admin token equal to the service token, a short token, half a TLS setup and an unreadable file, each on its own line', () => {
    const { log } = recordingLog();
    expect(problemsOf(() => grpcCredentials(loadConfig({ TOCK_GRPC_TOKEN: TOKEN, TOCK_ADMIN_TOKEN: TOKEN }), 'admin', log))[0]).to.contain('must differ');
    expect(problemsOf(() => loadConfig({ TOCK_GRPC_TOKEN: 'short' }))).to.deep.equal(['TOCK_GRPC_TOKEN: must be at least 16 characters (e.g. openssl rand -base64 32)']);
    expect(problemsOf(() => loadConfig({ TOCK_GRPC_TLS_CA: '/x/ca.crt' }))[0]).to.match(/^TOCK_GRPC_TLS_CA: .* go together/);
    expect(problemsOf(() => loadConfig({ TOCK_GRPC_TOKEN: TOKEN, TOCK_GRPC_TOKEN_FILE: '/x' }))[0]).to.contain('not both');
    const missing = loadConfig({ TOCK_GRPC_TLS_CA: join(dir, 'no-ca'), TOCK_GRPC_TLS_CERT: join(dir, 'no-cert'), TOCK_GRPC_TLS_KEY: join(dir, 'no-key') });
    expect(problemsOf(() => grpcCredentials(missing, 'service', log))).to.deep.equal([
      `TOCK_GRPC_TLS_CA: cannot read ${join(dir, 'no-ca')} (ENOENT)`,
      `TOCK_GRPC_TLS_CERT: cannot read ${join(dir, 'no-cert')} (ENOENT)`,
      `TOCK_GRPC_TLS_KEY: cannot read ${join(dir, 'no-key')} (ENOENT)`,
    ]);
  });

  it('never quotes a token in a message', () => {
    const problems = problemsOf(() => loadConfig({ TOCK_GRPC_TOKEN: 'tooShortSecret' }));
    expect(problems.join('\n')).not.to.contain('tooShortSecret');
  });
});
