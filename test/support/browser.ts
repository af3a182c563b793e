// A real browser for tests: Debian's chromium (installed by scripts/install.sh), driven by playwright-core, never a
// downloaded browser. Each launch has a fresh profile and no network features that would reach outside.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.MASS_CHROMIUM ?? '/usr/bin/chromium';

export interface TestBrowser {
  context: BrowserContext;
  /** A new page that records every console error, page error and dialog (dialogs are dismissed). */
  newPage(): Promise<WatchedPage>;
  close(): Promise<void>;
}

export interface WatchedPage {
  page: Page;
  consoleErrors: string[];
  pageErrors: string[];
  dialogs: string[];
}

export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: run scripts/install.sh (it installs Debian's chromium), or set MASS_CHROMIUM`,
    );
  }
  const profile = await mkdtemp(join(tmpdir(), 'mass-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
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
  return {
    context,
    async newPage() {
      const page = await context.newPage();
      const watched: WatchedPage = { page, consoleErrors: [], pageErrors: [], dialogs: [] };
      page.on('console', (message) => {
        if (message.type() === 'error') watched.consoleErrors.push(message.text());
      });
      page.on('pageerror', (error) => watched.pageErrors.push(error.message));
      page.on('dialog', (dialog) => {
        watched.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
        void dialog.dismiss();
      });
      return watched;
    },
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
