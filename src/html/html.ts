/**
 * HTML built from templates whose interpolations are escaped unless they are already `SafeHtml`. Everything in a
 * run directory may have been written by a model or an agent, so text is escaped by default and markup from records
 * is never passed through.
 */
export class SafeHtml {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

export type HtmlValue = string | number | boolean | null | undefined | SafeHtml | readonly HtmlValue[];

const replacements: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for an element's content or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => replacements[character]!);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.markup;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value as string | number | boolean));
}

/** A template tag: `html\`<td>${text}</td>\`` escapes `text`; nested `html` results are kept as they are. */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let markup = strings[0]!;
  values.forEach((value, index) => {
    markup += render(value) + strings[index + 1]!;
  });
  return new SafeHtml(markup);
}

/** Markup this program made itself (an SVG chart checked by `assertInertSvg`), marked as safe to include. */
export function trustedMarkup(markup: string): SafeHtml {
  return new SafeHtml(markup);
}
