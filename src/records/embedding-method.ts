import { z } from 'zod';

/** How the texts were embedded, recorded with every number made from them. */
export const EmbeddingMethod = z.object({
  kind: z.enum(['offline', 'endpoint']),
  /** The method as it is named wherever its numbers appear. */
  name: z.string(),
  /** The endpoint's model; null offline. */
  model: z.string().nullable(),
  /** The endpoint's base URL; null offline. */
  endpoint: z.string().nullable(),
  dimensions: z.number().int().positive(),
});
export type EmbeddingMethod = z.infer<typeof EmbeddingMethod>;
