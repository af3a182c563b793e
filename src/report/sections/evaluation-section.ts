import type { EvaluationFigures, GradeFigure } from '../../records/evaluation-figures.js';
import { html, type SafeHtml } from '../../html/html.js';
import { chart } from '../chart.js';
import { formatCount, formatInterval, formatNumber, formatPercent } from '../format.js';
import {
  gradeChart,
  gradePerTokenChart,
  judgeDirectedTextPart,
  omission,
  outputTokensTable,
  rewardHackingChart,
} from './evaluation-grade-figures.js';
import { intervalChartSpec } from './evaluation-interval-chart.js';
import { agreementCharts, orderInconsistencyPart, winRateCharts } from './evaluation-judging-figures.js';
import type { ReportEvaluation, RunReportData } from '../read-run.js';

export { winRatePoints } from './evaluation-judging-figures.js';

/** The evaluations' figures (`evaluation/<name>/summary.json`); a run without one says so. */
export async function evaluationSection(data: RunReportData): Promise<SafeHtml> {
  const parts: SafeHtml[] = [];
  for (const evaluation of data.evaluations) parts.push(await evaluationPart(evaluation));
  return html`<section id="evaluation">
    <h2>Evaluation</h2>
    ${parts.length === 0 ? html`<p class="empty">This run has no finished evaluation (evaluation/&lt;name&gt;/summary.json); <code>mass eval</code> makes one.</p>` : parts}
  </section>`;
}

async function evaluationPart({ name, summary }: ReportEvaluation): Promise<SafeHtml> {
  const figures = summary.figures;
  const confidence = formatPercent(figures.settings.confidence);
  const { grading } = figures;
  const omitted = (figure: GradeFigure) => grading.omitted.find((entry) => entry.figure === figure)?.reason;
  // With a mix of tasks, every grade figure says which tasks it covers.
  const coverage =
    grading.tasksWithoutGrader.length > 0 && grading.tasksWithGrader.length > 0
      ? `; tasks with a grader only: ${grading.tasksWithGrader.join(', ')}`
      : '';
  const winRates = await winRateCharts(figures, confidence);
  const agreement = await agreementCharts(figures);
  return html`<h3>Evaluation ${name}</h3>
    <p>
      ${formatCount(summary.counts.episodes)} episodes (${formatCount(summary.counts.failedEpisodes)} failed),
      ${formatCount(summary.counts.judgments)} judgments (${formatCount(summary.counts.failedJudgments)}
      failed, left out), ${formatCount(summary.counts.grades)} oracle grades
      (${formatCount(summary.counts.failedGrades)} failed); models
      ${summary.models.map((model) => `${model.name} (${model.servedAs}${model.standIn ? `, ${model.standIn}` : ''})`).join(', ')};
      judges
      ${summary.judges.map((judge) => `${judge.name}${judge.standIn ? ` (${judge.standIn})` : ''}`).join(', ') || 'none'};
      tasks ${summary.tasks.join(', ')}.
    </p>
    ${grading.note ? html`<p class="grading-note"><strong>Grading:</strong> ${grading.note}</p>` : ''}
    <h4>Win rates</h4>
    ${winRates.length === 0 ? html`<p class="empty">No comparison was judged.</p>` : winRates}
    ${omitted('oracle-win-rates') ? omission('The oracle’s win rate', omitted('oracle-win-rates')!) : ''}
    ${orderInconsistencyPart(summary.settings.orders, figures.orderInconsistency)}
    <h4>Oracle grade per generation</h4>
    ${
      omitted('grades')
        ? omission('Mean oracle grade', omitted('grades')!)
        : await gradeChart(figures, confidence, coverage)
    }
    <h4>Grade per 1,000 output tokens</h4>
    ${
      omitted('grade-per-token')
        ? [
            omission('Grade per 1,000 output tokens', omitted('grade-per-token')!),
            outputTokensTable(figures.tokens),
          ]
        : await gradePerTokenChart(figures, coverage)
    }
    <h4>Delegation</h4>
    ${await delegationChart(figures, confidence)}
    <h4>Evaluator agreement</h4>
    ${agreement.length === 0 ? html`<p class="empty">No pair of evaluators judged the same items.</p>` : agreement}
    ${omitted('oracle-agreement') ? omission('Agreement with the oracle', omitted('oracle-agreement')!) : ''}
    <h4>Reward hacking</h4>
    ${
      omitted('reward-hacking')
        ? omission('Reward hacking', omitted('reward-hacking')!)
        : await rewardHackingChart(figures)
    }
    ${judgeDirectedTextPart(figures.judgeDirectedText)}`;
}

/** The share of episodes that delegated, per generation and condition. */
async function delegationChart(figures: EvaluationFigures, confidence: string): Promise<SafeHtml> {
  const delegation = figures.delegation.map((entry) => ({
    ...entry,
    lower: entry.rateWilson?.lower ?? null,
    upper: entry.rateWilson?.upper ?? null,
  }));
  return chart({
    title: 'Delegation rate',
    caption: `share of episodes with at least one call of the agent tool, ${confidence} Wilson interval`,
    values: delegation.filter((entry) => entry.rate !== null),
    spec: intervalChartSpec({
      y: 'generation',
      x: 'rate',
      xTitle: 'delegating episodes',
      colour: 'condition',
      domain: [0, 1],
    }),
    table: {
      columns: [
        'generation',
        'condition',
        'episodes',
        'delegating',
        'rate',
        'interval',
        'mean delegations',
        'mean subagent threads',
      ],
      rows: delegation.map((entry) => [
        entry.generation,
        entry.condition,
        formatCount(entry.episodes),
        formatCount(entry.delegatingEpisodes),
        formatNumber(entry.rate),
        formatInterval(entry.rateWilson),
        formatNumber(entry.meanDelegations, 2),
        formatNumber(entry.meanSubagentThreads, 2),
      ]),
    },
  });
}
