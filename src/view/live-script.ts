import { createHash } from 'node:crypto';

import { trustedMarkup } from '../html/html.js';
import { PAGE_POLICY } from './response.js';

/** Where the live run page fetches its status section from, on the viewer's own origin. */
export const LIVE_SECTION_ROUTE = '/live/status-section';
/** The same status as JSON (`mass status --json`). */
export const LIVE_JSON_ROUTE = '/live/status.json';
/** How often the run page asks for the section again while the run is not finished. */
export const LIVE_INTERVAL_MS = 3000;

/**
 * The one script of the viewer: on the run page, it fetches the status section every few seconds and puts it in
 * place, so the page follows a running run without a reload. It sets the section's markup from the viewer's own
 * route, rendered and escaped by the server exactly as the page itself; it stops once the run has finished.
 */
export const LIVE_SCRIPT = `(() => {
  const section = document.getElementById('live-status');
  if (!section) return;
  const refresh = async () => {
    try {
      const response = await fetch('${LIVE_SECTION_ROUTE}', { cache: 'no-store' });
      if (response.ok) {
        section.innerHTML = await response.text();
        section.dataset.state = response.headers.get('X-Run-State') || '';
      }
    } catch (error) {
      section.dataset.state = 'unreachable';
    }
    if (section.dataset.state !== 'finished') setTimeout(refresh, ${LIVE_INTERVAL_MS});
  };
  if (section.dataset.state !== 'finished') setTimeout(refresh, ${LIVE_INTERVAL_MS});
})();`;

/** The script as the run page holds it, built outside any template so that its text stays exactly what is hashed. */
export const LIVE_SCRIPT_ELEMENT = trustedMarkup('<script>' + LIVE_SCRIPT + '</script>');

/** The CSP source that allows exactly `LIVE_SCRIPT` and nothing else. */
export const LIVE_SCRIPT_SOURCE = `'sha256-${createHash('sha256').update(LIVE_SCRIPT).digest('base64')}'`;

/**
 * The run page's policy: the viewer's page policy with two changes, and only on that page. `script-src` allows the
 * one script above by its hash (not `'self'`, so no file the viewer serves, and no markup that slipped through the
 * escaping, can run), and `connect-src 'self'` lets it fetch the status section from the viewer.
 */
export const LIVE_PAGE_POLICY = PAGE_POLICY.replace(
  "script-src 'none'",
  `script-src ${LIVE_SCRIPT_SOURCE}; connect-src 'self'`,
);
