import { escapeHtml, trustedMarkup, type SafeHtml } from '../html/html.js';

type Language = 'python' | 'script' | 'shell' | 'json' | 'plain';

const keywords: Record<Exclude<Language, 'plain'>, Set<string>> = {
  python: new Set(
    'and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield'.split(
      ' ',
    ),
  ),
  script: new Set(
    'async await break case catch class const continue default delete do else export extends false finally for from function if import in instanceof let new null return switch this throw true try typeof undefined var void while yield'.split(
      ' ',
    ),
  ),
  shell: new Set(
    'if then else elif fi for while do done case esac function in export local return'.split(' '),
  ),
  json: new Set(['true', 'false', 'null']),
};

const extensions: Record<string, Language> = {
  py: 'python',
  js: 'script',
  mjs: 'script',
  cjs: 'script',
  ts: 'script',
  sh: 'shell',
  bash: 'shell',
  json: 'json',
  jsonl: 'json',
};

export function languageOf(fileName: string): Language {
  const extension = /\.([A-Za-z0-9]+)$/.exec(fileName)?.[1]?.toLowerCase();
  return (extension && extensions[extension]) || 'plain';
}

/**
 * Code as `<pre>` with comments, strings, numbers and keywords coloured. Each token is escaped on its own, so the
 * colouring can never let the file's text become markup.
 */
export function highlightCode(text: string, fileName: string): SafeHtml {
  const language = languageOf(fileName);
  if (language === 'plain') return trustedMarkup(`<pre><code>${escapeHtml(text)}</code></pre>`);
  const comment =
    language === 'script'
      ? String.raw`\/\/[^\n]*|\/\*[\s\S]*?\*\/`
      : language === 'json'
        ? '(?!)'
        : '#[^\n]*';
  const strings =
    language === 'python'
      ? String.raw`"""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'`
      : String.raw`"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|\x60(?:\\.|[^\x60\\])*\x60`;
  const token = new RegExp(
    `(${comment})|(${strings})|(\\b\\d+(?:\\.\\d+)?(?:[eE][-+]?\\d+)?\\b)|([A-Za-z_][A-Za-z0-9_]*)`,
    'g',
  );
  const words = keywords[language];
  let markup = '';
  let last = 0;
  for (const match of text.matchAll(token)) {
    markup += escapeHtml(text.slice(last, match.index));
    const [whole, isComment, isString, isNumber, word] = match;
    const kind = isComment
      ? 'comment'
      : isString
        ? 'string'
        : isNumber
          ? 'number'
          : word && words.has(word)
            ? 'keyword'
            : undefined;
    markup += kind ? `<span class="tok-${kind}">${escapeHtml(whole)}</span>` : escapeHtml(whole);
    last = match.index + whole.length;
  }
  markup += escapeHtml(text.slice(last));
  return trustedMarkup(`<pre><code>${markup}</code></pre>`);
}
