import { describe, expect, it } from 'vitest';

import { outageSettings } from '../../src/config/fault-tolerance.js';
import { EndpointPools } from '../../src/session/endpoint-pools.js';

describe('the endpoint pools of a stage', () => {
  it('keep one outage gate per server address, whoever asks for it', async () => {
    const pools = new EndpointPools(outageSettings({}));
    const first = pools.gate({ baseUrl: 'http://a:1/v1' });
    expect(pools.gate({ baseUrl: 'http://a:1/v1', apiKey: 'k' })).toBe(first);
    expect(pools.gate({ baseUrl: 'http://b:1/v1' })).not.toBe(first);
    await pools.close();
  });

  it('keep slots per pool and key, each with its own limit', () => {
    const pools = new EndpointPools(outageSettings({}));
    const episodes = pools.slots('episodes', 'http://a:1/v1', 3);
    expect(pools.slots('episodes', 'http://a:1/v1', 3)).toBe(episodes);
    expect(episodes.limit).toBe(3);
    expect(pools.slots('judgments', 'http://a:1/v1', 2)).not.toBe(episodes);
    expect(pools.slots('episodes', 'http://b:1/v1', 3)).not.toBe(episodes);
  });
});
