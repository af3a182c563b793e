import { OptimizerCallRecord } from '../optimizer/optimizer-outcome.js';
import { proposeWorkflow } from '../optimizer/propose-workflow.js';
import { renderTaskPrompt } from '../tasks/render-prompt.js';
import { callThroughOutages } from './outage-gate.js';
import { SearchProposal } from './search-records.js';
import type { TaskSearchState } from './task-search-state.js';
import { searchVersionFiles } from '../store/run-paths.js';

const DEFAULT_EVIDENCE_TOKENS = 8_000;

/**
 * The optimizer's step for `version`: a new design from `current` (the last version run), with the champion as the
 * "previous best" and the whole comparison history, bounded by the stabiliser's `bound`. The call and its outcome
 * land in `<version>/optimizer.json`, the design in `<version>/workflow.json`.
 */
export async function proposeVersion(
  state: TaskSearchState,
  version: string,
  current: string,
  championId: string,
  bound: number | undefined,
): Promise<SearchProposal> {
  const { context, id, base } = state;
  const { run, optimizer, settings } = context;
  const proposal = await run.step(
    `${base}/${version}/proposal`,
    async (): Promise<SearchProposal> => {
      const basis = state.version(current);
      const champion = state.version(championId);
      const evidence = basis.episode
        ? await state.bundle(current, { totalTokens: settings.evidenceTokens ?? DEFAULT_EVIDENCE_TOKENS })
        : undefined;
      const outcome = await callThroughOutages(
        context.outages,
        `optimizer (${base}/${version})`,
        () =>
          proposeWorkflow(
            optimizer.model,
            {
              task: { id, prompt: renderTaskPrompt(state.task) },
              current: { label: current, design: basis.design! },
              // Always the champion, the bare-task reference included: without it the prompt cannot say what won.
              previousBest: {
                label: champion.label,
                design: champion.design,
                rationale: state.promotionRationale.get(champion.label) ?? '',
              },
              original: state.task.manifest.workflow,
              workspaceEvidence: evidence?.text,
              execution: basis.episode?.execution,
              history: state.history,
            },
            {
              modelName: optimizer.modelName,
              sampling: optimizer.sampling,
              repairAttempts: settings.optimizerRepairAttempts,
              maxChangeFraction: bound,
            },
          ),
        (error) =>
          context.onProgress?.({ kind: 'lost-to-outage', task: id, version, what: 'optimizer', error }),
      );
      await OptimizerCallRecord.write(run.path(base, version, searchVersionFiles.optimizer), {
        taskId: id,
        currentLabel: current,
        outcome,
      });
      if (!outcome.ok) {
        return { ok: false, reason: outcome.reason, errors: outcome.errors, basedOn: current };
      }
      await state.writeDesign(version, outcome.proposal.design);
      return {
        ok: true,
        design: outcome.proposal.design,
        changeFraction: outcome.changeFraction,
        basedOn: current,
      };
    },
    { output: SearchProposal },
  );
  context.onProgress?.({ kind: 'proposal', task: id, version, ok: proposal.ok });
  return proposal;
}
