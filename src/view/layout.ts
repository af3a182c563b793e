import { html, type SafeHtml } from '../html/html.js';

interface PageOptions {
  title: string;
  /** From the run down to this page: label and link; the last one is this page and is not linked. */
  crumbs: Array<[label: string, href: string]>;
  body: SafeHtml;
  /** What could not be read for this page; shown first, so a missing or damaged file is never silently skipped. */
  notes?: readonly string[];
  /** A script at the end of the body: only the viewer's own `LIVE_SCRIPT_ELEMENT`, which the run page's policy allows by hash. */
  script?: SafeHtml;
}

export function page(options: PageOptions): string {
  const crumbs = options.crumbs.map(([label, href], index) =>
    index === options.crumbs.length - 1
      ? html`<span>${label}</span>`
      : html`<a href="${href}">${label}</a> › `,
  );
  const notes =
    options.notes && options.notes.length > 0
      ? html`<section class="notes" id="notes">
          <h2>Could not be read</h2>
          <ul>
            ${options.notes.map((note) => html`<li>${note}</li>`)}
          </ul>
        </section>`
      : '';
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${options.title} · mass view</title>
        <link rel="stylesheet" href="/style.css" />
      </head>
      <body>
        <header class="top"><h1>${options.title}</h1></header>
        <nav class="crumbs">${crumbs}</nav>
        <main>${notes}${options.body}</main>
        ${options.script ?? ''}
      </body>
    </html> `.markup;
}

/** A table from rows of cells; an empty list reads as `empty` rather than an empty table. */
export function table(
  headings: readonly string[],
  rows: ReadonlyArray<readonly unknown[]>,
  empty = 'none',
): SafeHtml {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<table>
    <thead>
      <tr>
        ${headings.map((heading) => html`<th>${heading}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows.map(
        (row) =>
          html`<tr>
            ${row.map((cell) => html`<td>${cell as SafeHtml | string | number | null}</td>`)}
          </tr>`,
      )}
    </tbody>
  </table>`;
}

export function link(href: string, label: string): SafeHtml {
  return html`<a href="${href}">${label}</a>`;
}
