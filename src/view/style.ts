/** The viewer's one style sheet, served as `/style.css` so the pages' policy can forbid inline styles. */
export const VIEWER_STYLE = `
:root { color-scheme: light; --muted: #5f6b7a; --line: #d9dee5; --accent: #2f6fb3; }
* { box-sizing: border-box; }
body { font: 14px/1.5 system-ui, sans-serif; margin: 0; color: #1d2430; background: #f6f7f9; }
header.top { background: #1d2430; color: #fff; padding: 12px 28px; }
header.top h1 { margin: 0; font-size: 20px; overflow-wrap: anywhere; }
nav.crumbs { padding: 6px 28px; background: #fff; border-bottom: 1px solid var(--line); }
nav.crumbs a { color: var(--accent); text-decoration: none; }
main { padding: 4px 28px 48px; max-width: 1400px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 6px 18px 14px; margin: 14px 0; }
h2 { font-size: 17px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 16px 0 6px; }
a { color: var(--accent); }
table { border-collapse: collapse; margin: 6px 0; font-size: 13px; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #eef1f5; }
td.text { max-width: 560px; white-space: pre-wrap; overflow-wrap: anywhere; }
.muted, .empty { color: var(--muted); }
.notes { background: #fff8e6; border: 1px solid #f0d48a; border-radius: 6px; padding: 6px 18px; }
.notes li { overflow-wrap: anywhere; }
.bad { color: #a32020; font-weight: 600; }
.good { color: #1d7a35; font-weight: 600; }
pre { background: #f3f5f8; padding: 8px; overflow-x: auto; font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0; }
details { margin: 4px 0; }
summary { cursor: pointer; }
.message { border-left: 3px solid var(--line); padding: 2px 10px; margin: 8px 0; }
.message.system { border-color: #9aa5b1; }
.message.user { border-color: #2f6fb3; }
.message.assistant { border-color: #1d7a35; }
.message.tool { border-color: #b7791f; }
.message .who { font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; }
.call-stats { font-size: 12px; color: var(--muted); margin-left: 8px; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
details.reasoning > summary { color: var(--muted); font-style: italic; }
details.delegation { border: 1px solid #b9d3ee; border-radius: 6px; background: #f4f9ff; padding: 4px 10px; }
details.delegation > summary { font-weight: 600; }
.thread { margin: 6px 0; }
.side-by-side { display: grid; grid-template-columns: 1fr 1fr; gap: 14px; }
.side-by-side > div { min-width: 0; }
.diff-add { background: #e6ffec; }
.diff-remove { background: #ffebe9; }
.workspace-image { max-width: 100%; max-height: 480px; border: 1px solid var(--line); }
.markdown { overflow-wrap: anywhere; }
.markdown pre { white-space: pre; }
code { background: #f3f5f8; padding: 0 3px; }
pre code { background: none; padding: 0; }
.tok-comment { color: #6a737d; font-style: italic; }
.tok-string { color: #0a6c2e; }
.tok-number { color: #9a4d00; }
.tok-keyword { color: #6f42c1; font-weight: 600; }
`;
