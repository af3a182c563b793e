import { queueStatus, type QueueStatus } from '../../queue/queue-status.js';

export async function queueStatusAction(flags: {
  redis: string;
  redisPasswordEnv?: string;
  json?: boolean;
}): Promise<void> {
  const status = await queueStatus({ url: flags.redis, passwordEnv: flags.redisPasswordEnv });
  console.log(flags.json ? JSON.stringify(status, null, 2) : describeStatus(status));
}

function describeStatus(status: QueueStatus): string {
  if (status.endpoints.length === 0) return 'No episode queue yet: no coordinator has used this Redis.';
  const lines = ['endpoint                                  waiting  active  completed  failed  limit'];
  for (const endpoint of status.endpoints) {
    lines.push(
      `${endpoint.baseUrl.padEnd(40)} ${cell(endpoint.waiting, 8)} ${cell(endpoint.active, 7)} ${cell(endpoint.completed, 10)} ${cell(endpoint.failed, 7)} ${cell(endpoint.globalConcurrency ?? '-', 6)}`,
    );
  }
  lines.push('', 'worker                          connected  active  completed  failed');
  for (const worker of status.workers) {
    lines.push(
      `${worker.worker.padEnd(32)}${(worker.connected ? 'yes' : 'no').padStart(9)} ${cell(worker.active, 7)} ${cell(worker.completed, 10)} ${cell(worker.failed, 7)}`,
    );
  }
  return lines.join('\n');
}

function cell(value: number | string, width: number): string {
  return String(value).padStart(width);
}
