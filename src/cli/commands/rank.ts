import { UserError } from '../../errors.js';
import {
  fitBradleyTerry,
  readMatches,
  tallyRecords,
  type BradleyTerryFit,
  type PlayerRecord,
} from '../../ranking/index.js';

interface RankOptions {
  matches: string;
  prior: string;
  official?: boolean;
  json?: boolean;
}

export async function rankAction(options: RankOptions): Promise<void> {
  const prior = parsePrior(options.prior);
  const matches = await readMatches(options.matches);
  const fit = fitBradleyTerry(matches, { prior, mode: options.official ? 'official' : 'map' });
  if (options.json) {
    console.log(JSON.stringify(fit, null, 2));
    return;
  }
  console.log(describeFit(fit, matches.length));
  console.log(formatTable(fit, tallyRecords(matches)));
}

function parsePrior(value: string): number {
  const prior = Number(value);
  if (value.trim() === '' || !Number.isFinite(prior) || prior < 0) {
    throw new UserError(
      `--prior "${value}": use a non-negative number, e.g. 0.5 (0 for plain maximum likelihood)`,
    );
  }
  return prior;
}

function describeFit(fit: BradleyTerryFit, matchCount: number): string {
  const kind =
    fit.mode === 'official'
      ? `official-compatibility update, prior ${fit.prior} (not the maximum a posteriori of that prior)`
      : fit.prior === 0
        ? 'maximum likelihood, scores centred to mean 0'
        : `maximum a posteriori, prior ${fit.prior} virtual wins and losses against strength 1`;
  const outcome = fit.converged
    ? `converged in ${fit.iterations} iterations`
    : `NOT converged after ${fit.iterations} iterations`;
  const errors =
    fit.stderrMethod === 'inverse-hessian'
      ? 'full inverse Hessian'
      : `diagonal of the Hessian (${fit.prior > 0 ? 'a lower bound' : 'an approximation'})`;
  return `${fit.ranking.length} players, ${matchCount} matches; Bradley–Terry ${kind}; ${outcome}; ±: standard error from the ${errors}\n`;
}

function formatTable(fit: BradleyTerryFit, records: Map<string, PlayerRecord>): string {
  const rows = fit.ranking.map((id, index) => {
    const record = records.get(id) ?? { wins: 0, ties: 0, losses: 0 };
    return [
      String(index + 1),
      id,
      fit.scores[id]!.toFixed(3),
      `±${fit.stderr[id]!.toFixed(3)}`,
      String(record.wins),
      String(record.ties),
      String(record.losses),
    ];
  });
  const header = ['rank', 'id', 'score', 'stderr', 'wins', 'ties', 'losses'];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const leftAligned = new Set([1]);
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) =>
        leftAligned.has(column) ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!),
      )
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
