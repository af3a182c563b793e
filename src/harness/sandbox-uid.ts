/**
 * The uid the harness and its agents run as inside a sandbox, whatever host uid stands behind it
 * (`src/episode/sandbox-user.ts`). The harness's compile cache is laid out for it (`harness-node.ts`).
 */
export const SANDBOX_UID = 1000;
