import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { apiClient, ok } from '../support/api.ts';
import { freePort } from '../support/processes.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * The README's `npm start` on a checkout that was never built: it compiles dist/ first, then runs
 * it with plain node (the loader hook test/support/forbidTypeScript.mjs, given to that process and
 * inherited by its executor thread, fails any load of TypeScript or tsx). A second start finds
 * the build current and starts at once (when a build is stale: test/unit/currentBuild.test.ts). The
 * checkout is copied into .tmp/ inside this one, so node_modules resolves from here.
 */
describe('npm start: builds dist/ when it is missing, then runs it without TypeScript', function () {
  this.timeout(180_000);
  const ROOT = resolve('.');
  const HOOK = join(ROOT, 'test/support/forbidTypeScript.mjs');
  const TOKEN = 'NpmStart0123456789abcdefghijklmn';
  let app: string;
  let dataDir: string;
  let tock: ChildProcess | undefined;

  /** Runs the start script as package.json has it, with the hook added to its node; resolves once it serves, with its output. */
  async function start() {
    const script = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).scripts.start as string;
    const [node, ...args] = script.split(' ');
    expect(node).to.equal('node');
    const port = await freePort();
    let output = '';
    tock = spawn(process.execPath, ['--import', HOOK, ...args], {
      cwd: app,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', OPS_PORT: '0', DATA_DIR: dataDir, TOCK_BOOTSTRAP_TOKEN: TOKEN, TOCK_RATE_LIMIT: '0', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    tock.stdout!.on('data', (c) => (output += c));
    tock.stderr!.on('data', (c) => (output += c));
    await waitFor(() => output.includes('Tock is running') || tock!.exitCode !== null, 'Tock starts', 120_000);
    expect(tock.exitCode, output).to.equal(null);
    return { baseUrl: `http://127.0.0.1:${port}`, output: () => output };
  }

  async function stop() {
    const exited = new Promise((r) => tock!.once('exit', r));
    tock!.kill('SIGTERM');
    await exited;
    tock = undefined;
  }

  before(() => {
    mkdirSync(join(ROOT, '.tmp'), { recursive: true });
    app = mkdtempSync(join(ROOT, '.tmp', 'npm-start-'));
    dataDir = mkdtempSync(join(tmpdir(), 'tock-npm-start-'));
    for (const path of ['services', 'shared', 'bin', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) cpSync(join(ROOT, path), join(app, path), { recursive: true });
  });
  after(() => {
    tock?.kill('SIGKILL');
    rmSync(app, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the first start builds, then serves the API and the dashboard bundled at build time', async () => {
    expect(existsSync(join(app, 'dist'))).to.equal(false);
    const { baseUrl, output } = await start();
    expect(output()).to.contain('Building dist/');
    expect(existsSync(join(app, 'dist/services/embedded/main.js'))).to.equal(true);
    const api = apiClient(baseUrl, TOKEN);
    const job = await ok(api.call('cron_add', { url: 'https://example.com/hit', expression: '0 3 * * *' }));
    expect(job.id).to.be.a('number');
    const page = await fetch(`${baseUrl}/dashboard/`);
    const name = /<script type="module" src="(app\.[0-9a-f]{12}\.js)">/.exec(await page.text())?.[1];
    expect(await (await fetch(`${baseUrl}/dashboard/${name}`)).text()).to.equal(readFileSync(join(app, 'dist/services/gateway/dashboard/static/app.js'), 'utf8'));
    await stop();
  });

  it('a second start uses the build as it is, and keeps the data', async () => {
    const { baseUrl, output } = await start();
    expect(output()).not.to.contain('Building dist/');
    expect(await ok(apiClient(baseUrl, TOKEN).call('cron_list', {}))).to.have.length(1);
    await stop();
  });
});
