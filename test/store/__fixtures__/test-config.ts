import { z } from 'zod';

/** A small stand-in for mass's configuration, shared by the tests and the processes they spawn. */
export const TestConfig = z.object({
  model: z.object({ name: z.string(), temperature: z.number() }),
  seeds: z.array(z.number().int()),
  notes: z.string().default(''),
});
export type TestConfig = z.output<typeof TestConfig>;

export const testConfig: z.input<typeof TestConfig> = {
  model: { name: 'toy', temperature: 0.6 },
  seeds: [1, 2, 3],
};
