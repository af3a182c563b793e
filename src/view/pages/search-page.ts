import { html, type SafeHtml } from '../../html/html.js';
import {
  OptimizerCallRecord,
  type OptimizerCallRecord as OptimizerCall,
} from '../../records/optimizer-outcome.js';
import { TaskRepeatsRecord } from '../../records/repeat-records.js';
import type { TaskSearchResult } from '../../records/search-records.js';
import { RunFiles } from '../../store/run-files.js';
import {
  searchRepeatsFiles,
  searchRepeatsPath,
  searchTaskPath,
  searchVersionPath,
} from '../../store/run-paths.js';
import { diffWorkflows, renderWorkflowDiff, workflowChangeSize } from '../../workflow/workflow-diff.js';
import { isFreeTextDesign, TeamDesign } from '../../workflow/workflow.js';
import { link, page, table } from '../layout.js';
import { compareNames, compareUrl, readSearch, searchJudgments } from '../run-index.js';
import { taskCrumbs } from './crumbs.js';
import { searchNoiseSection } from './search-noise.js';

/** A task's design versions, oldest first: each one's diff from the one before and the optimizer's stated reasons. */
export async function searchPage(root: string, generation: string, task: string): Promise<string> {
  const files = new RunFiles(root);
  const search = await readSearch(files, generation, task);
  const versions = (await files.folders(searchTaskPath(generation, task)))
    .filter((name) => /^v\d+$/.test(name))
    .sort(compareNames);
  const judgments = await searchJudgments(files, generation, task);
  const sections: SafeHtml[] = [];
  let previous: { version: string; design: TeamDesign } | undefined;
  for (const version of versions) {
    const design = await files.json(
      TeamDesign,
      searchVersionPath(generation, task, version, 'workflow'),
      version === 'v0' ? 'the task has no design' : undefined,
    );
    const optimizer = await files.record(
      OptimizerCallRecord,
      searchVersionPath(generation, task, version, 'optimizer'),
    );
    const diff =
      design && previous
        ? html`<h3>
              Changes from ${previous.version}
              (${(workflowChangeSize(previous.design, design).fraction * 100).toFixed(0)}% of the design)
            </h3>
            <pre>${renderWorkflowDiff(diffWorkflows(previous.design, design))}</pre>`
        : '';
    const verdicts = judgments.filter((judgment) =>
      judgment.file.startsWith(searchVersionPath(generation, task, version) + '/'),
    );
    const iteration = search?.iterations.find((item) => item.version === version);
    sections.push(
      html`<section id="${version}">
        <h2>${version}${search?.champion === version ? ' (champion)' : ''}</h2>
        ${iteration?.decision ? html`<p>Champion after it: <strong>${iteration.decision.championAfter}</strong>${iteration.decision.promoted ? ' (promoted)' : ''}</p>` : ''}
        ${optimizer ? reasons(optimizer) : version === 'v0' ? html`<p class="muted">The task’s own design.</p>` : html`<p class="muted">No optimizer record.</p>`}
        ${diff}
        ${table(
          ['x', 'y', 'winner', 'orders agree', 'judge', 'seed', ''],
          verdicts.map((judgment) => [
            judgment.record.x.label,
            judgment.record.y.label,
            judgment.record.winner ?? `failed: ${judgment.record.failure ?? ''}`,
            judgment.record.ordersAgree === null ? '' : judgment.record.ordersAgree ? 'yes' : 'no',
            judgment.record.model,
            judgment.record.seed,
            link(compareUrl(judgment.xDir, judgment.yDir), 'compare'),
          ]),
          'no verdict on this version',
        )}
        ${design ? designDetails(design) : ''}
      </section>`,
    );
    if (design) previous = { version, design };
  }
  const body = html`${sections.length > 0 ? sections : html`<section><p class="empty">No design versions under ${searchTaskPath(generation, task)}.</p></section>`}
  ${await noise(files, search, generation, task)}`;
  return page({
    title: `Search ${task} · ${generation}`,
    crumbs: [...taskCrumbs(generation, task), ['design versions', '']],
    body,
    notes: files.notes,
  });
}

/** The search's noise when it was measured (`search.repeats`); nothing for a search without reruns. */
async function noise(
  files: RunFiles,
  search: TaskSearchResult | undefined,
  generation: string,
  task: string,
): Promise<SafeHtml | string> {
  const repeats = await files.record(TaskRepeatsRecord, searchRepeatsPath(generation, task));
  if (repeats) return searchNoiseSection(repeats, search, generation, task);
  const started = (await files.folders(searchTaskPath(generation, task))).includes(searchRepeatsFiles.folder);
  return started
    ? html`<section id="noise">
        <h2>Search noise</h2>
        <p class="empty">
          The reruns have not finished: ${searchRepeatsPath(generation, task)} is written when they have.
        </p>
      </section>`
    : '';
}

/** The design as recorded; a free-text v0 as its text, the way the orchestrator read it. */
function designDetails(design: TeamDesign): SafeHtml {
  return isFreeTextDesign(design)
    ? html`<details>
        <summary>the design (free text, as the task gives it)</summary>
        <pre>${design.text}</pre>
      </details>`
    : html`<details>
        <summary>the design (workflow.json)</summary>
        <pre>${JSON.stringify(design, null, 2)}</pre>
      </details>`;
}

function reasons(call: OptimizerCall): SafeHtml {
  const outcome = call.outcome;
  const attempts = html`<p class="muted">
    ${outcome.attempts.length} optimizer call(s) on ${call.currentLabel}, model ${outcome.model},
    ${outcome.usage.totalTokens} tokens.
  </p>`;
  if (!outcome.ok) {
    return html`${attempts}
      <p class="bad">No usable proposal: ${outcome.reason}</p>
      <ul>
        ${outcome.errors.map((error) => html`<li>${error}</li>`)}
      </ul>`;
  }
  const proposal = outcome.proposal;
  return html`${attempts}
    <h3>The optimizer’s reasons</h3>
    <div class="text">${proposal.why}</div>
    ${
      proposal.changes.length > 0
        ? html`<h3>Changes it named</h3>
            <ul>
              ${proposal.changes.map((change) => html`<li>${change}</li>`)}
            </ul>`
        : ''
    }
    ${
      proposal.evidenceUsed.length > 0
        ? html`<h3>Evidence it used</h3>
            <ul>
              ${proposal.evidenceUsed.map((item) => html`<li>${item}</li>`)}
            </ul>`
        : ''
    }
    <p><strong>Expected impact:</strong> ${proposal.expectedImpact}</p>
    <details>
      <summary>its change to ${call.currentLabel}, the design it improved</summary>
      <pre>${outcome.diffText}</pre>
    </details>
    ${
      proposal.verificationChecks.length > 0
        ? html`<h3>Checks it asked for</h3>
            <ul>
              ${proposal.verificationChecks.map((item) => html`<li>${item}</li>`)}
            </ul>`
        : ''
    }
    ${table(
      ['attempt', 'purpose', 'outcome'],
      outcome.attempts.map((attempt) => [
        attempt.attempt,
        attempt.purpose,
        attempt.outcome.ok ? 'usable' : `${attempt.outcome.reason}: ${attempt.outcome.errors.join('; ')}`,
      ]),
    )}`;
}
