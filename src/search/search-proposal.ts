import { EPISODE_DEFAULTS } from '../episode/episode-spec.js';
import { judgeCriteria } from '../optimizer/judge-criteria.js';
import type { NextMatch } from '../records/optimizer-call.js';
import { OptimizerCallRecord } from '../records/optimizer-outcome.js';
import { proposeWorkflow } from '../optimizer/propose-workflow.js';
import { renderTaskPrompt } from '../tasks/render-prompt.js';
import { callThroughOutages } from './outage-gate.js';
import { SearchProposal } from '../records/search-records.js';
import { type TaskSearchState } from './task-search-state.js';
import { REFERENCE } from '../records/search-records.js';
import { searchVersionFiles } from '../store/run-paths.js';

const DEFAULT_EVIDENCE_TOKENS = 8_000;

/**
 * The optimizer's step for `version`: a new design from `current` (the last version run), with the champion as the
 * "previous best", the whole comparison history, the judge's criteria and the comparison the new design will face,
 * bounded by the stabiliser's `bound`. The evidence budget is the current design's workspace alone when the next
 * design is judged against it, else shared half and half with an excerpt of the workspace it is judged against (the
 * champion's, or the reference's under the `official` rule). The call and its outcome land in
 * `<version>/optimizer.json`, the design in `<version>/workflow.json`.
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
      const opponentId = settings.championRule === 'paper' ? championId : REFERENCE;
      const opponent = state.version(opponentId);
      const nextMatch: NextMatch = {
        version,
        opponent: { label: opponent.label, bare: opponent.design === null },
        champion: { label: champion.label, bare: champion.design === null },
        rule: settings.championRule,
        judgeMode: settings.judgeMode,
      };
      const evidenceTokens = settings.evidenceTokens ?? DEFAULT_EVIDENCE_TOKENS;
      const showOpponent = opponentId !== current && opponent.episode !== null;
      const share = showOpponent ? Math.floor(evidenceTokens / 2) : evidenceTokens;
      const evidence = basis.episode
        ? await state.bundle(current, { totalTokens: share }, { runSummary: false })
        : undefined;
      const opponentEvidence = showOpponent
        ? await state.bundle(opponentId, { totalTokens: share })
        : undefined;
      const outcome = await callThroughOutages(
        context.outages,
        `optimizer (${base}/${version})`,
        () => {
          context.spending.beforeWork('optimizer');
          return proposeWorkflow(
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
              workspaceExcerpts: evidence?.excerpts,
              judge: judgeCriteria(state.task.judge),
              nextMatch,
              ...(opponentEvidence
                ? {
                    opponentEvidence: {
                      label: opponentId,
                      text: opponentEvidence.text,
                      tokens: opponentEvidence.tokens,
                      excerpts: opponentEvidence.excerpts,
                    },
                  }
                : {}),
              execution: basis.episode?.execution,
              // As the episodes run them: the run configuration's budgets, else the episode's own defaults.
              budgets: {
                timeoutSeconds: settings.episode.timeoutSeconds ?? EPISODE_DEFAULTS.timeoutSeconds,
                maxOutputTokensPerCall: settings.episode.maxOutputTokens ?? EPISODE_DEFAULTS.maxOutputTokens,
                outputTokens: settings.episode.outputBudget ?? null,
                modelCalls: null,
              },
              history: state.history,
            },
            {
              modelName: optimizer.modelName,
              sampling: optimizer.sampling,
              repairAttempts: settings.optimizerRepairAttempts,
              maxChangeFraction: bound,
            },
          );
        },
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
