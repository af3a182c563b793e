import { describe, expect, it } from 'vitest';

import { BUILD_NETWORK_VARIABLE, buildNetworkArguments } from '../../src/benchmark/container-images.js';

describe("a task image build's network", () => {
  it("is the engine's own on an engine with a bridge", () => {
    expect(buildNetworkArguments(true, {})).toEqual([]);
    expect(buildNetworkArguments(true, { [BUILD_NETWORK_VARIABLE]: 'host' })).toEqual([]);
  });

  it("is none without a bridge (the host's network reaches its loopback services), unless the dataset is trusted", () => {
    expect(buildNetworkArguments(false, {})).toEqual(['--network', 'none']);
    expect(buildNetworkArguments(false, { [BUILD_NETWORK_VARIABLE]: 'none' })).toEqual(['--network', 'none']);
    expect(buildNetworkArguments(false, { [BUILD_NETWORK_VARIABLE]: 'host' })).toEqual(['--network', 'host']);
    expect(() => buildNetworkArguments(false, { [BUILD_NETWORK_VARIABLE]: 'bridge' })).toThrow(
      'MASS_BUILD_NETWORK is "bridge": set it to host or none',
    );
  });
});
