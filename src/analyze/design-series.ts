import { isFreeTextDesign, type Workflow } from '../workflow/workflow.js';
import type { RecordedDesign, TaskDesigns } from './search-designs.js';
import { designComponents, type WorkflowComponent } from '../workflow/workflow-components.js';

/** One component text of one agent, in the design a task had at one point of its search. */
export interface SeriesItem {
  /** The task's index in the analysis's task list. */
  task: number;
  /** `<task>/<version>/<agent id>`: the agent's components share it. */
  agent: string;
  component: WorkflowComponent;
  text: string;
}

/**
 * The designs the tasks had at one point of their searches: `first` (each task's earliest structured design,
 * normally v0), `final` (its latest design), `champion` (its champion's design, for tasks whose search beat the bare
 * reference) and `v<k>` (the design of iteration k, for the tasks that have one).
 */
export interface DesignSeries {
  label: string;
  /** The version each task contributes, by task index. */
  versions: Array<{ task: number; version: string }>;
  items: SeriesItem[];
}

export interface SeriesPlan {
  series: DesignSeries[];
  /** Designs left out (free text has no components), one line each. */
  notes: string[];
}

/** The series of a generation's searches: first, final, champion, then every iteration in order. */
export function designSeries(tasks: readonly TaskDesigns[]): SeriesPlan {
  const notes: string[] = [];
  const structured = tasks.map((task) =>
    task.designs.filter((entry): entry is RecordedDesign & { design: Workflow } => {
      if (!isFreeTextDesign(entry.design)) return true;
      notes.push(`${task.task} ${entry.version} is free text, which has no components: left out`);
      return false;
    }),
  );
  const pick = (
    label: string,
    chooser: (
      designs: Array<RecordedDesign & { design: Workflow }>,
      index: number,
    ) => (RecordedDesign & { design: Workflow }) | undefined,
  ): DesignSeries => {
    const series: DesignSeries = { label, versions: [], items: [] };
    structured.forEach((designs, index) => {
      const chosen = chooser(designs, index);
      if (!chosen) return;
      const task = tasks[index]!.task;
      series.versions.push({ task: index, version: chosen.version });
      for (const text of designComponents(chosen.design)) {
        series.items.push({
          task: index,
          agent: `${task}/${chosen.version}/${text.agent}`,
          component: text.component,
          text: text.text,
        });
      }
    });
    return series;
  };
  const iterations = [...new Set(structured.flat().map((entry) => entry.iteration))].sort((a, b) => a - b);
  return {
    series: [
      pick('first', (designs) => designs[0]),
      pick('final', (designs) => designs.at(-1)),
      pick('champion', (designs, index) => designs.find((entry) => entry.version === tasks[index]!.champion)),
      ...iterations.map((iteration) =>
        pick(`v${iteration}`, (designs) => designs.find((entry) => entry.iteration === iteration)),
      ),
    ],
    notes,
  };
}
