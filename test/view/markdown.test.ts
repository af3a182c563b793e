import { describe, expect, it } from 'vitest';

import { renderMarkdown } from '../../src/view/markdown.js';

const imageUrl = (path: string) => `/raw/${path}`;

describe('renderMarkdown', () => {
  it('renders blocks and inline markup from escaped text', () => {
    const markup = renderMarkdown(
      '# Title <b>\n\nSome **bold** and *em* and `<code>`.\n\n- one\n- two\n\n```\n<script>x</script>\n```\n',
    ).markup;
    expect(markup).toContain('<h1>Title &lt;b&gt;</h1>');
    expect(markup).toContain('<strong>bold</strong>');
    expect(markup).toContain('<em>em</em>');
    expect(markup).toContain('<code>&lt;code&gt;</code>');
    expect(markup).toContain('<ul><li>one</li><li>two</li></ul>');
    expect(markup).toContain('<pre><code>&lt;script&gt;x&lt;/script&gt;</code></pre>');
  });

  it('keeps links only for http(s) and images only inside the workspace', () => {
    const markup = renderMarkdown(
      '[ok](https://example.org/a?b=1&c=2) [bad](javascript:alert(1)) [data](data:text/html,x)\n\n' +
        '![fit](./figures/fit.png) ![up](../../secret.png) ![abs](/etc/passwd) ![remote](https://example.org/x.png)',
      { imageUrl },
    ).markup;
    expect(markup).toContain(
      '<a href="https://example.org/a?b=1&amp;c=2" rel="noopener noreferrer nofollow">ok</a>',
    );
    expect(markup).not.toContain('href="javascript');
    expect(markup).not.toContain('href="data');
    expect(markup).toContain('<img class="workspace-image" src="/raw/figures/fit.png" alt="fit">');
    expect(markup.match(/<img /g)).toHaveLength(1);
    expect(markup).toContain('[image: up (../../secret.png)]');
    expect(markup).toContain('[image: abs (/etc/passwd)]');
  });
});
