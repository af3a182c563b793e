import { escapeHtml, trustedMarkup, type SafeHtml } from '../html/html.js';
import { isSafeSegment } from './view-paths.js';

interface MarkdownOptions {
  /** The URL of a relative image path (`figures/fit.png`) in the workspace; undefined shows the image as text. */
  imageUrl?: (path: string) => string | undefined;
}

/**
 * A small Markdown renderer for an agent's report: headings, paragraphs, lists, fenced code, tables, emphasis, code
 * spans, links and workspace images. The text is escaped before any markup is added, so whatever HTML the report
 * holds shows as text; links are kept only for http(s) URLs, so `javascript:` never becomes a link.
 */
export function renderMarkdown(source: string, options: MarkdownOptions = {}): SafeHtml {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const blocks: string[] = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index]!;
    const fence = /^\s*(```|~~~)/.exec(line);
    if (fence) {
      const code: string[] = [];
      index++;
      while (index < lines.length && !lines[index]!.trimStart().startsWith(fence[1]!))
        code.push(lines[index++]!);
      index++;
      blocks.push(`<pre><code>${escapeHtml(code.join('\n'))}</code></pre>`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      blocks.push(`<h${level}>${inline(heading[2]!.replace(/\s+#+\s*$/, ''), options)}</h${level}>`);
      index++;
      continue;
    }
    if (
      /^\s*\|.*\|\s*$/.test(line) &&
      index + 1 < lines.length &&
      /^\s*\|?\s*:?-{2,}/.test(lines[index + 1]!)
    ) {
      const rows: string[][] = [];
      while (index < lines.length && /^\s*\|.*\|\s*$/.test(lines[index]!)) rows.push(cells(lines[index++]!));
      const [head, , ...body] = rows;
      blocks.push(
        `<table><thead><tr>${head!.map((cell) => `<th>${inline(cell, options)}</th>`).join('')}</tr></thead><tbody>` +
          body
            .map((row) => `<tr>${row.map((cell) => `<td>${inline(cell, options)}</td>`).join('')}</tr>`)
            .join('') +
          '</tbody></table>',
      );
      continue;
    }
    const listItem = /^\s*([-*+]|\d+[.)])\s+/;
    if (listItem.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const items: string[] = [];
      while (index < lines.length && listItem.test(lines[index]!)) {
        items.push(`<li>${inline(lines[index]!.replace(listItem, ''), options)}</li>`);
        index++;
      }
      blocks.push(ordered ? `<ol>${items.join('')}</ol>` : `<ul>${items.join('')}</ul>`);
      continue;
    }
    if (line.trim() === '') {
      index++;
      continue;
    }
    const paragraph: string[] = [];
    while (
      index < lines.length &&
      lines[index]!.trim() !== '' &&
      !/^(#{1,6})\s|^\s*(```|~~~)/.test(lines[index]!) &&
      !listItem.test(lines[index]!)
    ) {
      paragraph.push(lines[index++]!);
    }
    blocks.push(`<p>${inline(paragraph.join('\n'), options)}</p>`);
  }
  return trustedMarkup(`<div class="markdown">${blocks.join('\n')}</div>`);
}

function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((cell) => cell.trim());
}

/** Inline markup of one escaped text: code spans first (their content stays literal), then images, links, emphasis. */
function inline(text: string, options: MarkdownOptions): string {
  return text
    .split(/(`[^`]+`)/)
    .map((part) =>
      part.startsWith('`') && part.endsWith('`') && part.length > 1
        ? `<code>${escapeHtml(part.slice(1, -1))}</code>`
        : emphasis(escapeHtml(part), options),
    )
    .join('');
}

function emphasis(escaped: string, options: MarkdownOptions): string {
  return escaped
    .replace(/!\[([^\]]*)\]\(([^)\s]+)\)/g, (whole, alt: string, target: string) => {
      const url = /^[a-z][a-z0-9+.-]*:/i.test(target) ? undefined : workspaceImage(unescape(target), options);
      return url === undefined
        ? `<span class="muted">[image: ${alt} (${target})]</span>`
        : `<img class="workspace-image" src="${escapeHtml(url)}" alt="${alt}">`;
    })
    .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (whole, label: string, target: string) =>
      /^https?:\/\//i.test(target)
        ? `<a href="${target}" rel="noopener noreferrer nofollow">${label}</a>`
        : `${label} <span class="muted">(${target})</span>`,
    )
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^*\w])\*([^*\s][^*]*)\*/g, '$1<em>$2</em>');
}

/** A relative path inside the workspace (`./` allowed); `..`, absolute paths and empty segments show as text. */
function workspaceImage(target: string, options: MarkdownOptions): string | undefined {
  const path = target.replace(/^(\.\/)+/, '');
  return path.split('/').every(isSafeSegment) ? options.imageUrl?.(path) : undefined;
}

/** Back from the escaped form to the text an agent wrote, for a workspace path. */
function unescape(escaped: string): string {
  return escaped
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}
