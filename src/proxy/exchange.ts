import type { RecordedResponse, UpstreamAttempt } from './log-row.js';

/** What passed between the proxy and the client for one call, as its log row tells it. */
export interface Exchange {
  status: number | null;
  response: RecordedResponse | null;
  responseBytes: number;
  clientDisconnected: boolean;
  error: string | null;
  attempts?: UpstreamAttempt[];
  /** The replica of the last attempt, when the upstream has replicas. */
  replica?: string;
}

export const NO_EXCHANGE: Exchange = {
  status: null,
  response: null,
  responseBytes: 0,
  clientDisconnected: false,
  error: null,
};
