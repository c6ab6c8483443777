import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { apiClient, ok } from '../support/api.ts';
import { freePort } from '../support/processes.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';
import { currentBuild, NODE_FLAGS } from '../support/build.ts';

/**
 * What the image runs: `npm run build`'s tsc output started with plain node. A loader hook
 * (test/support/forbidTypeScript.mjs, inherited by worker threads) fails any load of a .ts file
 * or of tsx, so the embedded system, its executor thread and the CLI are shown to need no
 * TypeScript at run time. Copied (or, without a current ./dist, built) into .tmp/ inside the
 * checkout so node_modules resolves as in /app.
 */
describe('compiled build (dist/): plain node, no TypeScript loader', function () {
  this.timeout(300_000);
  const ROOT = resolve('.');
  const HOOK = join(ROOT, 'test/support/forbidTypeScript.mjs');
  const TOKEN = 'Compiled0123456789abcdefghijklmn';
  let app: string;
  let dataDir: string;
  let tock: ChildProcess | undefined;
  let baseUrl: string;
  let output = '';

  const node = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, ['--import', HOOK, ...args], { cwd: app, encoding: 'utf8', env: { ...process.env, ...env } });

  before(async () => {
    mkdirSync(join(ROOT, '.tmp'), { recursive: true });
    app = mkdtempSync(join(ROOT, '.tmp', 'compiled-'));
    dataDir = mkdtempSync(join(tmpdir(), 'tock-compiled-'));
    const built = currentBuild(ROOT);
    if (built) {
      // `npm run build` has just run (as .ci/run does before the tests): its output is what is tested.
      cpSync(built, join(app, 'dist'), { recursive: true });
    } else {
      // The build script's compile step, into this app directory instead of ./dist.
      const build = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(app, 'dist')], { encoding: 'utf8' });
      expect(build.status, build.stdout + build.stderr).to.equal(0);
      // Its dashboard step: the browser bundle, made by esbuild now so that nothing bundles at run time.
      const bundle = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'services/gateway/dashboard/build.ts'), join(app, 'dist')], { encoding: 'utf8' });
      expect(bundle.status, bundle.stdout + bundle.stderr).to.equal(0);
    }
    // What the image's runtime stage copies besides node_modules: package.json and the launcher.
    cpSync(join(ROOT, 'bin'), join(app, 'bin'), { recursive: true });
    copyFileSync(join(ROOT, 'package.json'), join(app, 'package.json'));
  });
  after(async () => {
    tock?.kill('SIGKILL');
    rmSync(app, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the hook refuses TypeScript and esbuild (so the runs below would fail if they needed them)', () => {
    const direct = spawnSync(process.execPath, ['--import', HOOK, '--input-type=module', '-e', "await import('./services/cli/args.ts')"], { cwd: ROOT, encoding: 'utf8' });
    expect(direct.status).to.not.equal(0);
    expect(direct.stderr).to.contain('TypeScript at run time');
    const bundler = spawnSync(process.execPath, ['--import', HOOK, '--input-type=module', '-e', "await import('esbuild')"], { cwd: ROOT, encoding: 'utf8' });
    expect(bundler.status).to.not.equal(0);
    expect(bundler.stderr).to.contain('esbuild at run time');
  });

  it('the embedded entry point serves /healthz and the API, and its executor thread calls a URL', async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    tock = spawn(process.execPath, ['--import', HOOK, ...NODE_FLAGS, 'dist/services/embedded/main.js'], {
      cwd: app,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', OPS_PORT: '0', DATA_DIR: dataDir, TOCK_BOOTSTRAP_TOKEN: TOKEN, TOCK_RATE_LIMIT: '0', TOCK_ALLOW_NETWORKS: '127.0.0.0/8', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    tock.stdout!.on('data', (c) => (output += c));
    tock.stderr!.on('data', (c) => (output += c));
    await waitFor(() => output.includes('Tock is running') || tock!.exitCode !== null, 'the compiled embedded system starts', 60_000);
    expect(tock.exitCode, output).to.equal(null);
    const health = await fetch(`${baseUrl}/healthz`);
    expect(health.status).to.equal(200);

    const site = await startTarget(() => ({ body: 'compiled' }));
    try {
      const api = apiClient(baseUrl, TOKEN);
      const job = await ok(api.call('cron_add', { url: `${site.url}/hit`, expression: 'manual' }));
      await ok(api.call('cron_run', { id: job.id }));
      const [entry] = await waitFor(async () => {
        const logs = await ok(api.call('cron_logs', { id: job.id }));
        return logs.length ? logs : null;
      }, 'the run is logged', 20_000);
      expect(entry.result).to.include({ status: 0, httpStatus: 200, output: 'compiled' });
      expect(site.received.map((r) => r.url)).to.deep.equal(['/hit']);
    } finally {
      await site.close();
    }
    expect(output, 'no error logged').not.to.match(/"level":"error"/);
  });

  it('the gateway serves the dashboard bundled at build time (esbuild is not loaded at run time)', async () => {
    const page = await fetch(`${baseUrl}/dashboard/`);
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-security-policy')).to.contain("script-src 'self'");
    // The page names the script by its content hash (cached for good); it is the bundle written at build time.
    const name = /<script type="module" src="(app\.[0-9a-f]{12}\.js)">/.exec(await page.text())?.[1];
    expect(name).to.be.a('string');
    const script = await fetch(`${baseUrl}/dashboard/${name}`);
    expect(script.status).to.equal(200);
    expect(script.headers.get('content-type')).to.match(/^text\/javascript/);
    expect(await script.text()).to.equal(readFileSync(join(app, 'dist/services/gateway/dashboard/static/app.js'), 'utf8'));
    expect(output, 'no error logged').not.to.match(/"level":"error"/);
  });

  it('bin/tock.js runs the compiled CLI: --version, and an owner command against the compiled system', () => {
    const version = node(['bin/tock.js', '--version']);
    expect(version.status, version.stderr).to.equal(0);
    expect(version.stdout.trim()).to.match(/^tock \d+\.\d+\.\d+$/);
    const listed = node(['bin/tock.js', 'jobs', 'list', '--json'], { TOCK_URL: baseUrl, TOCK_TOKEN: TOKEN });
    expect(listed.status, listed.stderr).to.equal(0);
    expect(JSON.parse(listed.stdout)).to.have.length(1);
  });

  it('stops cleanly on SIGTERM', async () => {
    expect(tock!.exitCode, output).to.equal(null);
    const exited = new Promise<number | null>((r) => tock!.once('exit', (code) => r(code)));
    tock!.kill('SIGTERM');
    expect(await exited, output).to.equal(0);
  });
});
