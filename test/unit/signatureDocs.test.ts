import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { signJobCall, signWebhook } from '../../shared/signing.ts';

/**
 * The verification code users copy from docs/api.md (Signatures) is run, as printed, on requests
 * signed by Tock's own code: job calls (shared/signing.ts) and webhook notifications
 * (shared/signing.ts). A change to either signature, or a wrong snippet, fails here.
 */
const page = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
const section = (heading: string) => {
  const start = page.indexOf(`\n### ${heading}\n`);
  if (start < 0) throw new Error(`docs/api.md has no section "${heading}"`);
  const next = page.slice(start + 1).search(/\n##+ /);
  return page.slice(start, next < 0 ? undefined : start + 1 + next);
};
const block = (text: string, lang: string) => {
  const found = [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
  expect(found, `one ${lang} block`).to.have.length(1);
  return found[0]!;
};

const SECRET = 'whsec_documentedSecret0123456789';
const OLD_SECRET = 'whsec_previousSecret9876543210';
const URL_SENT = 'https://example.com:8443/hook?x=1';
const BODY = '{"id":12,"status":1,"message":"fails"}';

/** [header, method, url, body, secret, expected] for job calls, signed by Tock at `now`. */
function jobCases(now: number) {
  const current = [{ secret: SECRET, validUntil: 0 }];
  const both = [{ secret: SECRET, validUntil: 0 }, { secret: OLD_SECRET, validUntil: now + 3600_000 }];
  const signed = signJobCall(current, { method: 'POST', url: URL_SENT, body: BODY }, now)!;
  const signedBoth = signJobCall(both, { method: 'POST', url: URL_SENT, body: BODY }, now)!;
  const noBody = signJobCall(current, { method: 'GET', url: URL_SENT, body: null }, now)!;
  const old = signJobCall(current, { method: 'POST', url: URL_SENT, body: BODY }, now - 600_000)!;
  return [
    [signed, 'POST', URL_SENT, BODY, SECRET, true],
    [signedBoth, 'POST', URL_SENT, BODY, OLD_SECRET, true],
    [noBody, 'GET', URL_SENT, '', SECRET, true],
    [signed, 'POST', URL_SENT, BODY + ' ', SECRET, false],
    [signed, 'GET', URL_SENT, BODY, SECRET, false],
    [signed, 'POST', 'https://example.com/hook?x=1', BODY, SECRET, false],
    [signed, 'POST', URL_SENT, BODY, OLD_SECRET, false],
    [old, 'POST', URL_SENT, BODY, SECRET, false],
  ] as const;
}

/** [header, body, secret, expected] for webhooks, signed by the notifier at `now`. */
function webhookCases(now: number) {
  const signed = signWebhook([SECRET], BODY, now);
  const signedBoth = signWebhook([SECRET, OLD_SECRET], BODY, now);
  return [
    [signed, BODY, SECRET, true],
    [signedBoth, BODY, SECRET, true],
    [signedBoth, BODY, OLD_SECRET, true],
    [signed, BODY.replace('fails', 'okay'), SECRET, false],
    [signed, BODY, OLD_SECRET, false],
    [signWebhook([SECRET], BODY, now - 600_000), BODY, SECRET, false],
  ] as const;
}

describe('docs/api.md: the signature checks users copy', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'tock-signature-docs-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The page's JavaScript, as printed, with its function exported. */
  const loadJs = async (code: string, name: string) => {
    const file = join(dir, `${name}.mjs`);
    writeFileSync(file, `${code}\nexport { ${name} };\n`);
    return (await import(pathToFileURL(file).href))[name] as (...args: unknown[]) => boolean;
  };

  /** The page's Python, as printed, applied to each case; null when no python3 is installed. */
  const runPython = (code: string, name: string, cases: readonly (readonly unknown[])[]): boolean[] | null => {
    const harness = `${code}\nimport json, sys\nprint(json.dumps([${name}(*[a.encode() if i == len(c) - 3 else a for i, a in enumerate(c[:-1])]) for c in json.load(sys.stdin)]))\n`;
    const run = spawnSync('python3', ['-c', harness], { input: JSON.stringify(cases), encoding: 'utf8' });
    if (run.error) return null;
    expect(run.status, run.stderr).to.equal(0);
    return JSON.parse(run.stdout) as boolean[];
  };

  it('job calls, JavaScript: accepts what Tock signs (either key after a rotation), refuses any change, another key or an old timestamp', async () => {
    const verifyTock = await loadJs(block(section('Job calls'), 'js'), 'verifyTock');
    for (const [header, method, url, body, secret, expected] of jobCases(Date.now())) {
      expect(verifyTock(header, method, url, Buffer.from(body), secret), `${method} ${url} ${body} ${secret}`).to.equal(expected);
    }
  });

  it('webhooks, JavaScript: accepts what the notifier signs (either secret after a rotation), refuses a changed body, another secret or an old timestamp', async () => {
    const verifyTockWebhook = await loadJs(block(section('Webhook notifications'), 'js'), 'verifyTockWebhook');
    for (const [header, body, secret, expected] of webhookCases(Date.now())) {
      expect(verifyTockWebhook(header, Buffer.from(body), secret), `${body} ${secret}`).to.equal(expected);
    }
  });

  it('job calls and webhooks, Python: the same answers (skipped without python3)', function () {
    // The raw body is the third argument from the end in both Python functions (bytes there).
    const jobs = jobCases(Date.now());
    const jobResults = runPython(block(section('Job calls'), 'python'), 'verify_tock', jobs);
    if (jobResults === null) {
      console.log('      (skipped: python3 is not installed; the JavaScript checks above still ran)');
      this.skip();
    }
    expect(jobResults).to.deep.equal(jobs.map((c) => c[5]));
    const hooks = webhookCases(Date.now());
    const hookResults = runPython(block(section('Webhook notifications'), 'python'), 'verify_tock_webhook', hooks.map(([h, b, s, e]) => [h, b, s, e]));
    expect(hookResults).to.deep.equal(hooks.map((c) => c[3]));
  });
});
