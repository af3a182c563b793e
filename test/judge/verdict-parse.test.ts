import { describe, expect, it } from 'vitest';

import { parseVerdict } from '../../src/judge/index.js';

describe('reading the verdict from a judge reply', () => {
  it('accepts a bare object, a fenced one, and one after reasoning text', () => {
    expect(parseVerdict('{"winner": "A", "rationale": "A reports pass_rate 1.0."}')).toEqual({
      ok: true,
      value: { winner: 'A', rationale: 'A reports pass_rate 1.0.' },
    });
    const fenced = 'Verdict below.\n```json\n{"winner": "tie", "rationale": "Both equal."}\n```\n';
    expect(parseVerdict(fenced)).toMatchObject({ ok: true, value: { winner: 'tie' } });
    const reasoned =
      'A has {"kp": 4.4} in results/controller.json while B is missing results/ablation.json.\n\n' +
      '{"winner": "A", "rationale": "B lacks the ablation."}';
    expect(parseVerdict(reasoned)).toMatchObject({ ok: true, value: { winner: 'A' } });
  });

  it('takes the last valid verdict when the reply drafts one first', () => {
    const reply =
      'Draft: {"winner": "A", "rationale": "first thought"}\nOn reflection B is better.\n' +
      '{"winner": "B", "rationale": "B\'s metrics are finite; see {braces} in a string"}';
    expect(parseVerdict(reply)).toEqual({
      ok: true,
      value: { winner: 'B', rationale: "B's metrics are finite; see {braces} in a string" },
    });
  });

  it('tolerates letter case in the winner and extra fields', () => {
    expect(parseVerdict('{"winner": "Tie", "rationale": "x", "scores": {"A": 3}}')).toEqual({
      ok: true,
      value: { winner: 'tie', rationale: 'x' },
    });
    expect(parseVerdict('{"winner": "b", "rationale": "x"}')).toMatchObject({
      ok: true,
      value: { winner: 'B' },
    });
  });

  it('says what is wrong with an unusable reply', () => {
    expect(parseVerdict('')).toEqual({ ok: false, error: 'the reply is empty' });
    expect(parseVerdict('I prefer A.')).toEqual({ ok: false, error: 'no JSON object found in the reply' });
    expect(parseVerdict('{"winner": "C", "rationale": "x"}')).toEqual({
      ok: false,
      error: 'the JSON object is not a verdict: "winner" must be "A", "B" or "tie"',
    });
    expect(parseVerdict('{"winner": "A", "rationale": "  "}')).toMatchObject({
      ok: false,
      error: expect.stringContaining('"rationale" must be a non-empty string'),
    });
    expect(parseVerdict("{winner: 'A'}")).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^no valid JSON object found/),
    });
    expect(parseVerdict('{"winner": "A", "rationale": "cut off')).toEqual({
      ok: false,
      error: 'no JSON object found in the reply',
    });
  });
});
