import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it): Playwright cannot download one here. */
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = () => existsSync(CHROMIUM);

/**
 * A headless Chromium with a fresh profile of its own (no cookie, storage or cache shared with
 * another run), and nothing running in the background that would reach the network.
 */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'tock-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Where a screenshot named `name` goes: docs/dashboard/ (what docs/dashboard.md shows) when
 * TOCK_SCREENSHOTS=docs (`npm run docs:screenshots`), else a scratch directory, so that a test run
 * leaves the checkout as it found it.
 */
export function screenshotPath(name: string): string {
  const dir = process.env.TOCK_SCREENSHOTS === 'docs' ? new URL('../../docs/dashboard/', import.meta.url).pathname : (scratch ??= mkdtempSync(join(tmpdir(), 'tock-shots-')));
  return join(dir, name);
}
let scratch: string | undefined;
