import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import axe from 'axe-core';

/** Debian's Chromium (`apt-get install -y chromium`), or CHROMIUM_PATH. */
export const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
  (p): p is string => p !== undefined && p !== '' && existsSync(p),
);

if (!CHROMIUM) {
  console.warn(
    'Browser tests skipped: Chromium was not found. Install it with `sudo apt-get install -y chromium` (or set CHROMIUM_PATH) to run them; .ci/run installs it.',
  );
}

/**
 * Headless Chromium as this machine runs it: no sandbox (root), and none of the background
 * connections that a closed network refuses.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface Violation {
  id: string;
  impact: string | null | undefined;
  help: string;
  nodes: number;
}

/**
 * axe-core's serious and critical violations on the page. The pages' CSP allows no script, so the
 * page must come from a context created with `bypassCSP: true`.
 */
export async function seriousViolations(page: Page): Promise<Violation[]> {
  await page.addScriptTag({ content: axe.source });
  const results = await page.evaluate(() => (globalThis as unknown as { axe: typeof axe }).axe.run());
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
}

/** Bytes of every response of one page load (headers aside), as the page's weight. */
export function trackWeight(page: Page): { total(): number } {
  let bytes = 0;
  page.on('response', (response) => {
    response
      .body()
      .then((b) => {
        bytes += b.byteLength;
      })
      .catch(() => undefined);
  });
  return { total: () => bytes };
}
