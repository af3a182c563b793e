/**
 * Checks that an SVG rendered by vega holds nothing that could run or navigate: no script or foreign content, no
 * event-handler attribute, no link. Vega escapes the labels it draws from data (task ids, episode ids); this is the
 * second line of defence, so a future change in vega cannot put an agent's text into the report as markup.
 */
const forbiddenElements = new Set([
  'script',
  'foreignobject',
  'iframe',
  'object',
  'embed',
  'a',
  'image',
  'use',
]);
const tagPattern = /<\/?([A-Za-z][^\s/>]*)([^>]*)>/g;
const attributePattern = /([^\s=]+)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?/g;

export function assertInertSvg(svg: string): void {
  for (const [, name, attributes] of svg.matchAll(tagPattern)) {
    if (forbiddenElements.has(name!.toLowerCase())) {
      throw new Error(`the rendered chart holds a <${name}> element; refusing to include it in the report`);
    }
    for (const [, attribute] of attributes!.matchAll(attributePattern)) {
      const lower = attribute!.toLowerCase();
      if (lower.startsWith('on') || lower === 'href' || lower.endsWith(':href') || lower === 'style') {
        throw new Error(
          `the rendered chart holds a "${attribute}" attribute; refusing to include it in the report`,
        );
      }
    }
  }
}
