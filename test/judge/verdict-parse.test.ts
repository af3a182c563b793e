import { describe, expect, it } from 'vitest';

import { judgeSystemPrompt } from '../../src/judge/index.js';
import { parseVerdict } from '../../src/records/index.js';
import { MAX_POINT_CHARACTERS, MAX_POINTS } from '../../src/records/verdict.js';
import { Verdict } from '../../src/records/verdict.js';

const DEFAULT_JUDGE = { persona: 'a reviewer', lens: 'sound numbers', focus: null };

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

  it('reads the lists of points against each workspace, leniently, and a verdict without them as before', () => {
    const reply =
      'Both fit the curve.\n{"winner": "B", "rationale": "Workspace B reports an interval; Workspace A does not.", ' +
      '"against_A": ["Workspace A gives no interval for its EC50 of 5.91 µM.", "  Workspace A\'s report has no Validation section. "], "against_B": []}';
    expect(parseVerdict(reply)).toEqual({
      ok: true,
      value: {
        winner: 'B',
        rationale: 'Workspace B reports an interval; Workspace A does not.',
        against_A: [
          'Workspace A gives no interval for its EC50 of 5.91 µM.',
          "Workspace A's report has no Validation section.",
        ],
        against_B: [],
      },
    });
    // Any letter case in the names, a single point as a string, entries that are not text dropped: still a verdict.
    const loose = parseVerdict(
      '{"winner": "a", "rationale": "x", "Against_a": "Workspace A: 1 check failed.", "against_b": [3, "", "Workspace B lacks report.md."]}',
    );
    expect(loose).toEqual({
      ok: true,
      value: {
        winner: 'A',
        rationale: 'x',
        against_A: ['Workspace A: 1 check failed.'],
        against_B: ['Workspace B lacks report.md.'],
      },
    });
    // A verdict without lists has none, and keeps none in its record.
    const bare = parseVerdict('{"winner": "tie", "rationale": "Both equal."}');
    expect(bare.ok && JSON.parse(JSON.stringify(bare.value))).toEqual({
      winner: 'tie',
      rationale: 'Both equal.',
    });
  });

  it('keeps as many points, and as long, as the prompt asks for, and records each cut', () => {
    // The prompt states both limits, with the same constants the parser cuts to.
    const system = judgeSystemPrompt(DEFAULT_JUDGE);
    expect(system).toContain(`at most ${MAX_POINTS} each`);
    expect(system).toContain(`at most ${MAX_POINT_CHARACTERS} characters`);
    const points = Array.from({ length: 12 }, (_, index) => `Workspace B: point ${index}.`);
    const long = `Workspace A: ${'the fit excludes the lowest doses without saying why; '.repeat(12)}`;
    const many = parseVerdict(
      JSON.stringify({ winner: 'A', rationale: 'x', against_A: [long], against_B: points }),
    );
    expect(many.ok).toBe(true);
    if (!many.ok) return;
    expect(many.value.against_B).toEqual(points.slice(0, MAX_POINTS));
    expect(many.value.against_A![0]).toHaveLength(MAX_POINT_CHARACTERS);
    expect(many.value.against_A![0]!.endsWith('…')).toBe(true);
    expect(many.value.cuts).toEqual([
      `against_A: 1 point cut at ${MAX_POINT_CHARACTERS} characters`,
      `against_B: ${12 - MAX_POINTS} points past the first ${MAX_POINTS} dropped`,
    ]);
    // A stored verdict reads back with its record of cuts, and nothing is counted twice.
    const stored = Verdict.parse(JSON.parse(JSON.stringify(many.value)));
    expect(stored).toEqual(many.value);
    // Within the limits nothing is cut and nothing is recorded.
    const within = parseVerdict(
      JSON.stringify({ winner: 'A', rationale: 'x', against_B: points.slice(0, 2) }),
    );
    expect(within.ok && within.value.cuts).toBeUndefined();
  });
});
