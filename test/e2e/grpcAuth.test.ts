import { expect } from 'chai';
import { grpcHealthClient } from '../support/health.ts';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../shared/errors.ts';
import { AdminService, JobsService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { LogsService } from '../../shared/gen/tock/v1/logs_pb.ts';
import { PlannerService } from '../../shared/gen/tock/v1/planner_pb.ts';
import { createClient } from '../../shared/grpc/bridge.ts';
import { randomToken, type GrpcCredentials } from '../../shared/grpc/grpcAuth.ts';
import { makeTestPki, tlsEnv, type TestPki } from '../support/certs.ts';
import { credentialsOf, distributedEnv, runCli, startService, type DistributedEnv, type ServiceProcess } from '../support/processes.ts';
import { natsForThisSuite } from '../support/natsServer.ts';


/** Resolves with the error a call ends in, or null when the service answered (its own refusal, e.g. NOT_FOUND, counts as an answer). */
async function outcome(call: Promise<unknown>): Promise<AppError | null> {
  try {
    await call;
    return null;
  } catch (error) {
    if (error instanceof AppError && error.kind !== 'INTERNAL' && error.kind !== 'UNAVAILABLE') return null;
    return error as AppError;
  }
}

const refused = (error: AppError | null) => {
  expect(error, 'the call went through').to.be.instanceOf(AppError);
  // Refused by the peer (or its TLS handshake), never shown upstream as the API client's own 401.
  expect(error!.kind).to.be.oneOf(['INTERNAL', 'UNAVAILABLE']);
  return error!.message;
};

/** One cheap call per service: account 0 / job 0 never exist, so past the door the service answers with its own refusal or an empty list. */
function probes(env: DistributedEnv, credentials: GrpcCredentials) {
  const options = { deadlineMs: 5_000 };
  const jobs = createClient(JobsService, env.JOBS_ADDR, credentials, options);
  const planner = createClient(PlannerService, env.PLANNER_ADDR, credentials, options);
  const logs = createClient(LogsService, env.LOGS_ADDR, credentials, options);
  const admin = createClient(AdminService, env.ADMIN_ADDR, credentials, options);
  const calls = {
    jobs: () => outcome(jobs.getAccount({ id: 0n })),
    planner: () => outcome(planner.nextRuns({ accountId: 1n, id: 0n, limit: 1 })),
    logs: () => outcome(logs.logs({ accountId: 1n, limit: 1 })),
    admin: () => outcome(admin.listAccounts({})),
  };
  return { calls, close: () => [jobs, planner, logs, admin].forEach((c) => c.close()) };
}

describe('gRPC between services: every door needs its credential (distributed processes)', function () {
  const nats = natsForThisSuite();
  this.timeout(120_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-grpc-auth-'));
  const procs: ServiceProcess[] = [];
  after(async () => {
    for (const p of procs.reverse()) await p.kill();
    rmSync(dataDir, { recursive: true, force: true });
    await nats.stop();
  });

  describe('shared tokens (TLS terminated elsewhere)', () => {
    let env: DistributedEnv;
    before(async () => {
      env = await distributedEnv(join(dataDir, 'token'), { NATS_URL: nats.url });
      procs.push(...(await Promise.all([
        startService('jobs', env, /jobs service listening/),
        startService('planner', env, /planner service listening/),
        startService('logs', env, /logs service listening/),
      ])));
    });

    it('answers the right token on every service, and the admin token on the admin service', async () => {
      const service = probes(env, credentialsOf(env));
      const admin = probes(env, credentialsOf(env, 'admin'));
      try {
        expect(await service.calls.jobs()).to.equal(null);
        expect(await service.calls.planner()).to.equal(null);
        expect(await service.calls.logs()).to.equal(null);
        expect(await admin.calls.admin()).to.equal(null);
      } finally {
        service.close();
        admin.close();
      }
    });

    for (const [what, credentials] of [
      ['no credential', () => ({})],
      ['a wrong token', () => ({ token: randomToken() })],
    ] as const) {
      it(`refuses a call with ${what} on jobs, planner, logs and admin`, async () => {
        const p = probes(env, credentials());
        try {
          for (const name of ['jobs', 'planner', 'logs', 'admin'] as const) {
            expect(refused(await p.calls[name]()), name).to.contain('missing or wrong call credential');
          }
        } finally {
          p.close();
        }
      });
    }

    it('answers the gRPC health protocol without a credential (probes carry none), and nothing else', async () => {
      for (const address of [env.JOBS_ADDR, env.PLANNER_ADDR, env.LOGS_ADDR]) {
        const health = grpcHealthClient(address);
        try {
          expect(await health.serving('', 5000), address).to.equal(true);
        } finally {
          health.close();
        }
      }
    });

    it("refuses the gateway's identity on the admin service, and the admin's on the gateway's services", async () => {
      const gateway = probes(env, credentialsOf(env));
      const admin = probes(env, credentialsOf(env, 'admin'));
      try {
        expect(refused(await gateway.calls.admin())).to.contain('missing or wrong call credential');
        expect(refused(await admin.calls.jobs())).to.contain('missing or wrong call credential');
      } finally {
        gateway.close();
        admin.close();
      }
    });

    it('lets the CLI manage accounts through ADMIN_ADDR with the admin token only', async () => {
      const created = await runCli(['account', 'create', '--name', 'remote'], env);
      expect(created.code, created.stderr).to.equal(0);
      expect(created.stdout).to.match(/token: [A-Za-z0-9]{32}/);
      // The gateway's token where the admin token belongs: refused by the admin service.
      const asGateway = await runCli(['account', 'list'], { ...env, TOCK_ADMIN_TOKEN: env.TOCK_GRPC_TOKEN, TOCK_GRPC_TOKEN: '' });
      expect(asGateway.code).to.equal(1);
      expect(asGateway.stderr).to.contain('missing or wrong call credential');
      expect(asGateway.stdout).not.to.contain('remote');
    });

    it('refuses to start a service without credentials, and starts with TOCK_GRPC_INSECURE=1 saying so', async () => {
      const bare = { ...env, TOCK_GRPC_TOKEN: '', TOCK_ADMIN_TOKEN: '', JOBS_GRPC_PORT: '0', ADMIN_GRPC_PORT: '0', PLANNER_GRPC_PORT: '0', LOGS_GRPC_PORT: '0' };
      const names = ['jobs', 'planner', 'logs', 'gateway'];
      const errors = await Promise.all(
        names.map((name) => startService(name, { ...bare, PORT: '0' }, /listening/, 90_000).then((p) => p.kill().then(() => null), (e: Error) => e)),
      );
      errors.forEach((error, i) => expect(error?.message, names[i]).to.match(/exited with 1[\s\S]*TOCK_GRPC_TOKEN: gRPC needs credentials/));
      const sameTokens = await startService('jobs', { ...bare, TOCK_GRPC_TOKEN: env.TOCK_GRPC_TOKEN, TOCK_ADMIN_TOKEN: env.TOCK_GRPC_TOKEN }, /listening/).catch((e: Error) => e);
      expect((sameTokens as Error).message).to.contain('TOCK_ADMIN_TOKEN: must differ from TOCK_GRPC_TOKEN');
      const open = await startService('jobs', { ...bare, TOCK_GRPC_INSECURE: '1', NATS_URL: '' }, /jobs service listening/);
      await open.kill();
      expect(open.output.join('')).to.match(/TOCK_GRPC_INSECURE=1: gRPC calls are NOT authenticated/);
    });

    it('reads tokens from files (a mounted Secret)', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tock-secret-'));
      writeFileSync(join(dir, 'token'), `${env.TOCK_GRPC_TOKEN}\n`);
      writeFileSync(join(dir, 'admin'), randomToken());
      const fromFiles = await distributedEnv(join(dataDir, 'files'), { NATS_URL: '', TOCK_GRPC_TOKEN: '', TOCK_ADMIN_TOKEN: '', TOCK_GRPC_TOKEN_FILE: join(dir, 'token'), TOCK_ADMIN_TOKEN_FILE: join(dir, 'admin') });
      const jobs = await startService('jobs', fromFiles, /jobs service listening/);
      const p = probes(fromFiles, { token: env.TOCK_GRPC_TOKEN });
      const admin = probes(fromFiles, { token: readFileSync(join(dir, 'admin'), 'utf8') });
      try {
        expect(await p.calls.jobs()).to.equal(null);
        expect(await admin.calls.admin()).to.equal(null);
        expect(refused(await p.calls.admin())).to.contain('credential');
      } finally {
        p.close();
        admin.close();
        await jobs.kill();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('mutual TLS (certificates from files)', () => {
    let pki: TestPki;
    let rogue: TestPki;
    let env: DistributedEnv;
    const tlsOf = (p: TestPki, token?: string): GrpcCredentials => ({
      token,
      tls: { ca: readFileSync(p.ca), cert: readFileSync(p.cert), key: readFileSync(p.key), serverName: 'localhost' },
    });
    before(async () => {
      pki = makeTestPki('tock');
      rogue = makeTestPki('rogue');
      // TLS alone authenticates the services; the admin service still wants its own token on top.
      env = await distributedEnv(join(dataDir, 'tls'), { NATS_URL: nats.url, TOCK_GRPC_TOKEN: '', ...tlsEnv(pki), TOCK_GRPC_TLS_SERVER_NAME: 'localhost' });
      procs.push(...(await Promise.all([
        startService('jobs', env, /jobs service listening/),
        startService('planner', env, /planner service listening/),
        startService('logs', env, /logs service listening/),
      ])));
    });
    after(() => [pki, rogue].forEach((p) => rmSync(p.dir, { recursive: true, force: true })));

    it('answers a client whose certificate our CA signed', async () => {
      const p = probes(env, tlsOf(pki));
      const admin = probes(env, tlsOf(pki, env.TOCK_ADMIN_TOKEN));
      try {
        for (const name of ['jobs', 'planner', 'logs'] as const) expect(await p.calls[name](), name).to.equal(null);
        expect(await admin.calls.admin()).to.equal(null);
      } finally {
        p.close();
        admin.close();
      }
    });

    it('refuses plaintext, a certificate from another CA, and a good certificate without the admin token on the admin service', async () => {
      const plain = probes(env, { token: env.TOCK_ADMIN_TOKEN });
      const stranger = probes(env, tlsOf(rogue, env.TOCK_ADMIN_TOKEN));
      const noAdminToken = probes(env, tlsOf(pki));
      try {
        for (const name of ['jobs', 'planner', 'logs', 'admin'] as const) {
          expect(refused(await plain.calls[name]()), name).to.contain('unavailable');
          expect(refused(await stranger.calls[name]()), name).to.contain('unavailable');
        }
        expect(refused(await noAdminToken.calls.admin())).to.contain('missing or wrong call credential');
      } finally {
        [plain, stranger, noAdminToken].forEach((p) => p.close());
      }
    });
  });
});
