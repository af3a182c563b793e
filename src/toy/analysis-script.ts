import type { DeliverableSpec, Recipe } from './task-reading.js';
import { ANALYSIS_PROGRAM, RESULT_PREFIX } from './analysis-program.js';
import { TOY_OUTPUT_MARKER } from './toy-marker.js';

/**
 * The Python script a toy worker writes and runs: one fixed analysis (the recipe) on the task's data, the files the
 * worker is responsible for, the checks it chose to run, and one `TOY_RESULT {json}` line for its report. The
 * behaviours the toy draws (checks run or skipped, a forgotten key, a complete or brief report) are constants at the
 * top of the script, in the model's own output, so the toy trainer can read them from supervised turns.
 */

export interface ScriptPlan {
  agentId: string;
  title: string;
  recipe: Recipe;
  dataFiles: string[];
  /** What this script writes. */
  outputs: DeliverableSpec[];
  /** Every deliverable of the task: checks validate those that exist (and this script's own, which must). */
  deliverables: DeliverableSpec[];
  checksRun: string[];
  checksSkipped: string[];
  /** A required key the script forgets to write: the slip of a careless first attempt. */
  slipOmittedKey: string | null;
  reportComplete: boolean;
}

export { RESULT_PREFIX };

export function analysisScript(plan: ScriptPlan): string {
  const constants = [
    `AGENT = ${pythonString(plan.agentId)}`,
    `TITLE = ${pythonString(plan.title)}`,
    `RECIPE = ${pythonString(plan.recipe)}`,
    `DATA_FILES = ${pythonStrings(plan.dataFiles)}`,
    `OUTPUTS = json.loads(${pythonString(JSON.stringify(plan.outputs.map(compact)))})`,
    `DELIVERABLES = json.loads(${pythonString(JSON.stringify(plan.deliverables.map(compact)))})`,
    `CHECKS_RUN = ${pythonStrings(plan.checksRun)}`,
    `CHECKS_SKIPPED = ${pythonStrings(plan.checksSkipped)}`,
    `SLIP_OMITTED_KEY = ${plan.slipOmittedKey === null ? 'None' : pythonString(plan.slipOmittedKey)}`,
    `REPORT_COMPLETE = ${plan.reportComplete ? 'True' : 'False'}`,
  ];
  return `# Written by the mass toy model ${TOY_OUTPUT_MARKER}: a rule-based stand-in for a language model.
import csv
import json
import math
import os

import numpy as np

${constants.join('\n')}
${ANALYSIS_PROGRAM}`;
}

/** The behaviour constants of a toy script, read back from its source; undefined for any other text. */
export interface ScriptBehaviour {
  checksRun: string[];
  checksSkipped: string[];
  slipOmittedKey: string | null;
  reportComplete: boolean;
  writesReport: boolean;
  writesMetrics: boolean;
}

export function readScriptBehaviour(source: string): ScriptBehaviour | undefined {
  if (!source.startsWith('# Written by the mass toy model')) return undefined;
  const constant = (name: string) => new RegExp(`^${name} = (.*)$`, 'm').exec(source)?.[1];
  const strings = (text: string | undefined): string[] => {
    try {
      const value: unknown = JSON.parse(text ?? '[]');
      return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
    } catch {
      return [];
    }
  };
  const outputs = /^OUTPUTS = json\.loads\((.*)\)$/m.exec(source)?.[1] ?? '""';
  let kinds: string[] = [];
  try {
    const specs: unknown = JSON.parse(JSON.parse(outputs) as string);
    if (Array.isArray(specs)) kinds = specs.map((spec) => String((spec as { kind?: unknown }).kind));
  } catch {
    kinds = [];
  }
  const slip = constant('SLIP_OMITTED_KEY');
  return {
    checksRun: strings(constant('CHECKS_RUN')),
    checksSkipped: strings(constant('CHECKS_SKIPPED')),
    slipOmittedKey: slip === undefined || slip === 'None' ? null : (JSON.parse(slip) as string),
    reportComplete: constant('REPORT_COMPLETE') === 'True',
    writesReport: kinds.includes('report'),
    writesMetrics: kinds.some((kind) => kind === 'metrics-json' || kind === 'json'),
  };
}

function compact(spec: DeliverableSpec) {
  return {
    path: spec.path,
    kind: spec.kind,
    requiredKeys: spec.requiredKeys,
    sections: spec.sections,
    minWords: spec.minWords,
    columns: spec.columns,
  };
}

/** A JSON string literal is a valid Python string literal (JSON.stringify never writes the one escape Python lacks). */
function pythonString(text: string): string {
  return JSON.stringify(text);
}

function pythonStrings(items: string[]): string {
  return `[${items.map(pythonString).join(', ')}]`;
}
