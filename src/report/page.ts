import { html, trustedMarkup, type SafeHtml } from '../html/html.js';

/**
 * The report's page: one HTML file with its style inline and no script at all. The content security policy forbids
 * scripts, frames and every fetch, so even markup that slipped through could neither run nor reach the network.
 */
const contentSecurityPolicy =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'none'; form-action 'none'; base-uri 'none'";

const style = `
:root { color-scheme: light; --muted: #5f6b7a; --line: #d9dee5; --accent: #2f6fb3; }
* { box-sizing: border-box; }
body { font: 14px/1.5 system-ui, sans-serif; margin: 0; color: #1d2430; background: #f6f7f9; }
header.top { background: #1d2430; color: #fff; padding: 16px 32px; }
header.top h1 { margin: 0; font-size: 22px; }
header.top p { margin: 4px 0 0; color: #c5ccd6; }
nav { padding: 8px 32px; background: #fff; border-bottom: 1px solid var(--line); position: sticky; top: 0; }
nav a { margin-right: 16px; color: var(--accent); text-decoration: none; }
main { padding: 8px 32px 48px; max-width: 1200px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px 20px 16px; margin: 16px 0; }
h2 { font-size: 19px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 16px; margin-top: 24px; }
h4 { font-size: 14px; margin: 16px 0 4px; }
table { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #eef1f5; }
td.text { max-width: 520px; white-space: pre-wrap; overflow-wrap: anywhere; }
figure.chart { margin: 12px 0 20px; }
figure.chart figcaption { margin-bottom: 6px; }
.chart-svg { overflow-x: auto; }
table.chart-data { font-size: 12px; color: #333; }
.notes { background: #fff8e6; border: 1px solid #f0d48a; border-radius: 6px; padding: 8px 20px; }
.notes li { overflow-wrap: anywhere; }
.empty, .muted { color: var(--muted); }
pre { background: #f3f5f8; padding: 8px; overflow-x: auto; font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; }
`;

export function page(options: {
  title: string;
  subtitle: string;
  nav: Array<[string, string]>;
  body: SafeHtml;
}): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy}" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${options.title}</title>
        <style>
          ${trustedMarkup(style)}
        </style>
      </head>
      <body>
        <header class="top">
          <h1>${options.title}</h1>
          <p>${options.subtitle}</p>
        </header>
        <nav>${options.nav.map(([anchor, label]) => html`<a href="#${anchor}">${label}</a>`)}</nav>
        <main>${options.body}</main>
      </body>
    </html> `.markup;
}
