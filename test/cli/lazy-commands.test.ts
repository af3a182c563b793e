import { describe, expect, it } from 'vitest';

import { buildProgram } from '../../src/cli/main.js';

describe('the mass program', () => {
  it('registers only the command it runs, and every command for help or an unknown name', async () => {
    const names = async (...args: string[]) =>
      (await buildProgram(['node', 'mass', ...args])).commands.map((command) => command.name());
    expect(await names('episode', '--task', 't')).toEqual(['episode']);
    expect(await names('report', '--help')).toEqual(['report']);
    const every = await names('--help');
    for (const name of ['demo', 'episode', 'search', 'eval', 'report', 'view', 'tasks'])
      expect(every).toContain(name);
    expect(await names('nonsense')).toEqual(every);
    expect(await names()).toEqual(every);
  });
});
