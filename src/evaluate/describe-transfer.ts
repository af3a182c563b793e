import type { TransferRecord } from '../records/evaluation-records.js';

/** Which design each side of a workflow transfer ran: its win rates are the `transfer` condition's above. */
export function describeTransfer(transfer: TransferRecord): string[] {
  const bare = (side: 'candidate' | 'baseline') =>
    transfer.tasks.filter((task) => task[side].champion === 'reference').map((task) => task.task);
  const notes = [
    ...bare('candidate').map(
      (task) => `${task}: ${transfer.designsFrom}'s search never beat the bare task, run bare`,
    ),
    ...bare('baseline').map(
      (task) => `${task}: ${transfer.against}'s search never beat the bare task, run bare`,
    ),
    ...transfer.tasks
      .filter((task) => task.sameDesign)
      .map((task) => `${task.task}: both sides ran the same design`),
    ...transfer.leftOut.map((entry) => `${entry.task} left out: ${entry.reason}`),
  ];
  return [
    '',
    `Workflow transfer (the paper's Table 2): ${transfer.candidate} against ${transfer.baseline}, ${transfer.executor} ` +
      `executing ${transfer.designsFrom}'s and ${transfer.against}'s search champions on ` +
      `${transfer.tasks.map((task) => task.task).join(', ') || 'no task'}; its win rates are the "transfer" rows above`,
    ...notes.map((note) => `  ${note}`),
  ];
}
