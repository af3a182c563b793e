import type { WorkPlanEntry } from '../store/work-plan.js';
import type { EpisodeFolder } from './episode-folders.js';
import type { GroupStatus, KindCount } from './run-status.js';
import type { StepRow } from './run-steps.js';
import { placeOfStep, type StepPlace } from './step-place.js';

/** A group of steps with its place and plan, before it is counted. */
export interface StepGroup {
  place: Omit<StepPlace, 'kind'>;
  steps: Array<StepRow & { kind: string }>;
  plan: WorkPlanEntry | undefined;
}

/** A step of one of these kinds, once done, closes its group: the stage has written its result. */
const CLOSING_KINDS = new Set(['result', 'select', 'dataset', 'train']);

/** The run's steps by group, with the groups that are only planned so far. */
export function groupSteps(
  steps: readonly StepRow[],
  plans: ReadonlyMap<string, WorkPlanEntry>,
): StepGroup[] {
  const groups = new Map<string, StepGroup>();
  for (const step of steps) {
    const { kind, ...place } = placeOfStep(step.key);
    let group = groups.get(place.group);
    if (!group) {
      group = { place, steps: [], plan: plans.get(place.group) };
      groups.set(place.group, group);
    }
    group.steps.push({ ...step, kind });
  }
  for (const [key, plan] of plans) {
    if (groups.has(key)) continue;
    const { kind: _kind, ...place } = placeOfStep(`${key}/planned`);
    groups.set(key, { place: { ...place, group: key }, steps: [], plan });
  }
  return [...groups.values()];
}

/**
 * Counts a group: per kind, done, failed and in flight against the plan, and its state. A step recorded as started
 * is in flight while the run's process lives (`alive`), and was stopped otherwise.
 */
export function countGroup(
  group: StepGroup,
  alive: boolean,
  episodes: readonly EpisodeFolder[],
): GroupStatus {
  const kinds = new Map<string, KindCount>();
  const kindOf = (kind: string): KindCount => {
    let count = kinds.get(kind);
    if (!count) {
      count = { kind, done: 0, failed: 0, inFlight: 0, planned: group.plan?.planned[kind] ?? null };
      kinds.set(kind, count);
    }
    return count;
  };
  for (const kind of Object.keys(group.plan?.planned ?? {})) kindOf(kind);
  let started = 0;
  let closed = false;
  for (const step of group.steps) {
    const count = kindOf(step.kind);
    if (step.status === 'done') count.done++;
    else if (step.status === 'failed') count.failed++;
    else {
      started++;
      if (alive) count.inFlight++;
    }
    if (step.status === 'done' && CLOSING_KINDS.has(step.kind)) closed = true;
  }
  const planEpisodes = group.plan?.episodes;
  const episodeCount = planEpisodes
    ? {
        done: episodes.filter(
          (episode) =>
            episode.finished &&
            !episode.staged &&
            episode.dir.startsWith(`${planEpisodes.folder}/`) &&
            episode.id.startsWith(planEpisodes.idPrefix),
        ).length,
        planned: planEpisodes.planned,
      }
    : null;
  const counts = [...kinds.values()];
  const complete =
    closed ||
    (counts.length > 0 &&
      started === 0 &&
      counts.every((count) => count.failed === 0 && count.done >= (count.planned ?? count.done)));
  const failed = counts.some((count) => count.failed > 0);
  let state: GroupStatus['state'];
  if (complete) state = 'done';
  else if (started > 0) state = alive ? 'running' : 'stopped';
  else if (failed) state = 'failed';
  else if (group.steps.length === 0 && (episodeCount?.done ?? 0) === 0) state = 'waiting';
  else state = alive ? 'running' : 'stopped';
  return { group: group.place.group, label: group.place.label, state, kinds: counts, episodes: episodeCount };
}

/** The state of several groups together: a stage's. */
export function combinedState(states: readonly GroupStatus['state'][], alive: boolean): GroupStatus['state'] {
  if (states.length === 0) return 'waiting';
  if (states.includes('running')) return 'running';
  if (states.every((state) => state === 'done')) return 'done';
  if (states.every((state) => state === 'waiting')) return 'waiting';
  if (states.includes('failed') && !alive) return 'failed';
  if (states.includes('stopped')) return 'stopped';
  return alive ? 'running' : 'stopped';
}
