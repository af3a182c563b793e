import { UserError } from '../errors.js';
import type { StudentKind } from '../records/students-record.js';

export interface StudentSpec {
  /** How the student is named in records and figures: `S2`, `M4`, `X4`…, or as configured. */
  name: string;
  kind: StudentKind;
  /** Selected episodes in its training data. */
  episodes: number;
}

/** A selected episode of one round's collections, as the students draw them. */
export interface SelectedEpisode {
  episodeId: string;
  task: string;
  /** Relative to the run directory. */
  dir: string;
  /** 1 for the best of its task's selection. */
  rank: number;
}

/** One round's selections: every task's selected training episodes, team and single-agent, and its validation ones. */
export interface SelectionPools {
  team: readonly SelectedEpisode[];
  single: readonly SelectedEpisode[];
  teamValidation: readonly SelectedEpisode[];
  singleValidation: readonly SelectedEpisode[];
}

export interface StudentDataset {
  student: StudentSpec;
  team: SelectedEpisode[];
  single: SelectedEpisode[];
  /**
   * The round's validation selections of the kinds its data holds (S: single-agent, M: team, X: both): whatever its
   * size, every student of a kind chooses its checkpoint on the same windows.
   */
  validation: SelectedEpisode[];
}

const SPEC = /^([SMX])(\d+)$/;

/** `S2,M2,X4` → three students; the number is the episodes of each dataset. */
export function parseStudentSpecs(text: string, flag = '--students'): StudentSpec[] {
  const specs: StudentSpec[] = [];
  for (const part of text.split(',').map((item) => item.trim())) {
    const match = SPEC.exec(part);
    const episodes = match ? Number(match[2]) : 0;
    if (!match || !Number.isSafeInteger(episodes) || episodes < 1) {
      throw new UserError(
        `${flag} "${part}": give each student as S, M or X and its episodes, e.g. S2,M2,X4 (S single-agent, M multi-agent, X mixed)`,
      );
    }
    if (specs.some((spec) => spec.name === part))
      throw new UserError(`${flag}: ${part} is given twice; give each student once`);
    specs.push({ name: part, kind: match[1] as StudentKind, episodes });
  }
  if (specs.length === 0) throw new UserError(`${flag}: name at least one student, e.g. S2,M2`);
  return specs;
}

/**
 * The episodes of a student's dataset, drawn deterministically from the round's selections: best ranks first, one
 * task after another at each rank (rank 1 of every task, then rank 2…), so that a small dataset covers the tasks
 * before it goes deeper into one. S takes single-agent episodes only, M team episodes only, X half and half (the odd
 * one from the team). Refused when a pool holds fewer episodes than asked. Its validation episodes are the round's
 * validation selections of the same kinds.
 */
export function studentDataset(pools: SelectionPools, student: StudentSpec): StudentDataset {
  const teamCount =
    student.kind === 'M' ? student.episodes : student.kind === 'S' ? 0 : Math.ceil(student.episodes / 2);
  const singleCount = student.episodes - teamCount;
  return {
    student,
    team: take(pools.team, teamCount, student, 'team'),
    single: take(pools.single, singleCount, student, 'single-agent'),
    validation: [
      ...(student.kind === 'S' ? [] : interleaveByRank(pools.teamValidation)),
      ...(student.kind === 'M' ? [] : interleaveByRank(pools.singleValidation)),
    ],
  };
}

function take(
  pool: readonly SelectedEpisode[],
  count: number,
  student: StudentSpec,
  what: string,
): SelectedEpisode[] {
  if (count > pool.length) {
    throw new UserError(
      `student ${student.name}: it needs ${count} selected ${what} episodes, and the round selected ${pool.length}` +
        (what === 'single-agent' && pool.length === 0
          ? ' (collect them with distill.singleAgentCollection: true)'
          : '') +
        '; ask for fewer',
    );
  }
  return interleaveByRank(pool).slice(0, count);
}

/** Rank 1 of every task (tasks in name order), then rank 2 of every task, and so on. */
export function interleaveByRank(pool: readonly SelectedEpisode[]): SelectedEpisode[] {
  return [...pool].sort(
    (a, b) => a.rank - b.rank || a.task.localeCompare(b.task) || a.episodeId.localeCompare(b.episodeId),
  );
}
