import { describeCost } from '../cost/cost-total.js';
import { html, type SafeHtml } from '../html/html.js';
import { formatCounts, formatDuration, formatModelCall, formatTokens } from '../status/format.js';
import { readRunRecords } from '../status/read-run.js';
import type { RunStatus } from '../status/run-status.js';
import {
  describeBudgetSpent,
  SPENT_BUDGET_NOTE,
  spentTokens,
  type SpendingStatus,
} from '../status/spending.js';
import { DEFAULT_WINDOW_MS, stageName, summariseRun } from '../status/summarise.js';
import { episodeLocationOfDir, episodeUrl } from './episode-location.js';
import { link, table } from './layout.js';

/** The run's status as `mass status` gives it, read now; undefined for a folder with no steps yet. */
export async function runStatusNow(root: string): Promise<RunStatus | undefined> {
  try {
    return summariseRun(await readRunRecords(root, { windowMs: DEFAULT_WINDOW_MS }));
  } catch {
    return undefined;
  }
}

/** The inside of the run page's live section: what `mass status` says, each in-flight episode linked. */
export function liveStatusMarkup(status: RunStatus | undefined): SafeHtml {
  if (status === undefined)
    return html`<h2>Status</h2>
      <p class="empty">no step of this run has started</p>`;
  const { run, eta } = status;
  const stageRows = status.stages.flatMap((stage) =>
    stage.groups.map((group, index) => [
      index === 0 ? stageName(stage) : '',
      index === 0 ? stateText(stage.state) : '',
      group.label ?? '',
      stateText(group.state),
      formatCounts(group),
      index === 0 ? etaText(stage.state, stage.eta.remainingMs) : '',
    ]),
  );
  const episodeRows = status.inFlight.episodes.map((episode) => {
    const location = episode.where === 'local' ? episodeLocationOfDir(episode.dir) : undefined;
    return [
      location ? link(episodeUrl(location), episode.id) : episode.id,
      `${episode.state}${episode.where === 'worker' ? ' (worker)' : ''}`,
      formatDuration(episode.ageMs),
      episode.calls,
      episode.currentCall ? `#${episode.currentCall.seq}, ${formatDuration(episode.currentCall.ageMs)}` : '',
      `${formatTokens(episode.promptTokens)} in / ${formatTokens(episode.completionTokens)} out`,
    ];
  });
  const callRows = status.inFlight.calls.map((call) => [
    call.kind,
    call.key,
    call.state,
    formatDuration(call.ageMs),
    call.modelCalls.length === 0
      ? ''
      : html`${call.modelCalls.map((modelCall) => html`<div>${formatModelCall(modelCall)}</div>`)}`,
  ]);
  const rateRows = status.throughput.endpoints.map((endpoint) => [
    endpoint.model,
    endpoint.calls,
    endpoint.failedCalls,
    endpoint.callsPerSecond.toFixed(2),
    endpoint.outputTokensPerSecond.toFixed(1),
  ]);
  const problemRows = status.problems
    .slice(-20)
    .map((problem) => [problem.kind, problem.what, problem.at ?? '', problem.reason]);
  return html`<h2>Status</h2>
    <p id="live-summary">
      <strong class="${run.state === 'stopped' ? 'bad' : run.state === 'finished' ? 'good' : ''}"
        >${run.state}</strong
      >
      · read at ${status.readAt}
      ${
        run.state === 'finished'
          ? ''
          : html`· ETA ${eta.remainingMs === null ? 'unknown' : formatDuration(eta.remainingMs)}
              <span class="muted">(${eta.basis})</span>`
      }
    </p>
    ${table(['stage', 'state', 'task', 'task state', 'done of planned', 'ETA'], stageRows, 'no step has started')}
    <h3>In flight</h3>
    ${table(['episode', 'state', 'age', 'calls', 'current call', 'tokens so far'], episodeRows, 'no episode in flight')}
    ${callRows.length > 0 ? table(['judge or optimizer call', 'step', 'state', 'age', 'model calls waiting'], callRows) : ''}
    <h3>Throughput over the last ${Math.round(status.throughput.windowMs / 60_000)} minutes</h3>
    ${table(['model', 'calls', 'failed', 'calls/s', 'output tokens/s'], rateRows, 'no model call in that time')}
    <h3>Outages and failures</h3>
    ${table(['kind', 'what', 'at', 'reason'], problemRows, 'none')} ${spendingMarkup(status.spending)}`;
}

/** What the run spent (in all, per stage and role) and each budget beside its limit, as `mass status` says it. */
function spendingMarkup(spending: SpendingStatus | null): SafeHtml {
  if (spending === null)
    return html`<h3>Spending</h3>
      <p class="empty">no spending journal and no budget</p>`;
  const row = (what: readonly string[], figures: SpendingStatus['total']) => [
    ...what,
    describeCost(figures.cost),
    formatTokens(figures.promptTokens),
    formatTokens(figures.completionTokens),
    figures.calls,
  ];
  const rows = [
    row(['all', '', ''], spending.total),
    ...spending.groups.map((group) => row([group.stage, group.label, group.role], group.spentFigures)),
  ];
  const budgetRows = spending.budgets.map((budget) => [
    budget.budget,
    describeBudgetSpent(budget),
    budget.spent >= budget.limit
      ? html`<span class="bad">${SPENT_BUDGET_NOTE}</span>`
      : `${formatTokens(spentTokens(budget.spentFigures))} tokens so far`,
  ]);
  return html`<h3>Spending</h3>
    ${table(['stage', 'generation or evaluation', 'role', 'cost', 'tokens in', 'tokens out', 'calls'], rows)}
    ${table(['budget', 'spent of its limit', ''], budgetRows, 'no budget configured')}`;
}

function stateText(state: string): SafeHtml {
  const tone = state === 'failed' || state === 'stopped' ? 'bad' : state === 'done' ? 'good' : '';
  return html`<span class="${tone}">${state}</span>`;
}

function etaText(state: string, remainingMs: number | null): string {
  if (state === 'done') return '';
  return remainingMs === null ? 'unknown' : formatDuration(remainingMs);
}
