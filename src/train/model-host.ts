import type { Endpoint, RoleEndpoints } from '../config/endpoint.js';
import type { ModelGeneration } from '../records/model-generation.js';
import type { ModelRegistry } from '../records/registry.js';

/** A generation being served: the endpoints every role uses while it plays them. */
export interface ServedGeneration {
  endpoints: RoleEndpoints;
  close(): Promise<void>;
}

/** An endpoint put where it answers, and how to stop serving it (nothing, for a server mass did not start). */
export interface PlacedEndpoint {
  endpoint: Endpoint;
  close(): Promise<void>;
}

/**
 * Puts a model where it answers: the seam between the loop, which sees OpenAI-compatible endpoints only, and what
 * serves each generation (a server already running, vLLM's runtime adapters, a restart command, the toy model).
 * `src/hosting/model-kind.ts` picks the host the configuration's model kind names.
 */
export interface ModelHost {
  /**
   * How records, reports and the terminal mark what this model made when it is a stand-in for a language model
   * (the toy model: `toy`); null for a real model.
   */
  readonly standIn: string | null;
  /** Refuses, before anything runs, a loop of this many rounds whose generations could not all be served. */
  checkRounds(rounds: number): void;
  /** L0's weights, as the registry records them: the configured base model, or what the host writes into the run. */
  baseWeights(runDirectory: string): Promise<string>;
  /** The configuration's own model with its base weights, for commands that run one stage (`mass search`). */
  serveBase(): Promise<ServedGeneration>;
  /** Deploys a generation (a trained one onto its server) and serves it: the loop's way. */
  serve(
    generation: ModelGeneration,
    registry: ModelRegistry,
    runDirectory: string,
  ): Promise<ServedGeneration>;
  /**
   * Where a generation deployed earlier answers, checked (`mass eval`). Nothing is restarted; with the registry, an
   * adapter the server no longer holds (an older generation's, unloaded when a newer one was deployed) is loaded
   * again over its base model.
   */
  reach(generation: ModelGeneration, registry?: ModelRegistry): Promise<ServedGeneration>;
  /** An endpoint of the configuration put where it answers: one without an address is served by this host. */
  place(endpoint: Endpoint): Promise<PlacedEndpoint>;
  /** Runs a generation's training; a host that shares its GPUs with the training frees them meanwhile. */
  duringTraining?<T>(work: () => Promise<T>): Promise<T>;
}
