import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page, Request } from 'playwright-core';
import { launchChromium } from './browser.ts';
import { waitFor } from './waitFor.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface PageCall {
  fn: string;
  params: any;
  http: number;
}

/**
 * Collects what `page` reports that no dashboard page should: script errors and
 * Content-Security-Policy refusals, and, unless `consoleErrors` is false, errors written to the
 * console (a refusal shown at a field, HTTP 400, is expected there and left out).
 */
export function watchProblems(page: Page, { consoleErrors = true } = {}): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (m) => {
    if ((consoleErrors && m.type() === 'error' && !/status of 400/.test(m.text())) || /Content Security Policy|Refused to/i.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  return problems;
}

/** Waits until the text of `selector`'s first match matches `re` (the dashboard redraws on its own). */
export const waitForText = (page: Page, selector: string, re: RegExp, timeoutMs = 10_000) =>
  waitFor(async () => re.test((await page.locator(selector).first().textContent({ timeout: 500 }).catch(() => '')) ?? ''), `${selector} to match ${re}`, timeoutMs);

/**
 * A Chromium tab signed in to the dashboard at `baseUrl`, recording the page's API calls and its
 * problems (watchProblems).
 */
export async function openDashboard(baseUrl: string, token: string) {
  const browser = await launchChromium();
  const page: Page = await browser.context.newPage();
  const calls: PageCall[] = [];
  const problems = watchProblems(page);
  let inFlight = 0;
  page.on('request', () => inFlight++);
  page.on('requestfailed', () => inFlight--);
  page.on('requestfinished', (request: Request) => {
    inFlight--;
    const m = /\/api\/v1\/(\w+)$/.exec(request.url());
    if (m) void request.response().then((r) => calls.push({ fn: m[1]!, params: JSON.parse(request.postData() ?? '{}'), http: r?.status() ?? 0 }));
  });
  await page.goto(`${baseUrl}/dashboard/`);
  await page.locator('#token').fill(token);
  await page.locator('button[type=submit]').click();
  await page.locator('#sign-out').waitFor();
  return {
    page,
    calls,
    problems,
    close: () => browser.close(),
    /** Runs `action` and waits for the page's next call of `fn` to be answered. */
    async nextCall(fn: string, action: () => Promise<unknown>) {
      const before = calls.filter((c) => c.fn === fn).length;
      await action();
      return waitFor(() => calls.filter((c) => c.fn === fn)[before], `a ${fn} call`, 15_000);
    },
    /** Opens a route and waits for `ready`; answers the calls the page made to show it. */
    async open(route: string, ready: string) {
      // What the page was still doing (the job list after signing in) is not this route's.
      await waitFor(() => inFlight === 0, 'the page idle', 15_000);
      await new Promise((r) => setTimeout(r, 100));
      const before = calls.length;
      await page.goto(`${baseUrl}/dashboard/#${route}`);
      await page.locator(ready).first().waitFor();
      // Calls still in flight when the view is drawn are counted too.
      await new Promise((r) => setTimeout(r, 300));
      return calls.slice(before).map((c) => c.fn);
    },
    /** The document's scroll width, its h1 count and its serious or critical axe-core violations. */
    async layout() {
      const scroll = await page.evaluate(() => document.documentElement.scrollWidth);
      const h1 = await page.locator('h1').count();
      await page.evaluate(AXE);
      const violations = await page.evaluate<{ id: string; impact: string }[]>(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact })))`);
      return { scroll, h1, bad: violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'), all: violations };
    },
    /** Accepts (or dismisses) the next confirmation, and answers its text. */
    confirmNext(accept = true) {
      return new Promise<string>((resolve) =>
        page.once('dialog', (dialog) => {
          resolve(dialog.message());
          void (accept ? dialog.accept() : dialog.dismiss());
        }),
      );
    },
  };
}
