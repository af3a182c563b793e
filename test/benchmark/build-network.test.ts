import { describe, expect, it } from 'vitest';

import {
  BUILD_NETWORK_VARIABLE,
  buildNetworkArguments,
  engineFailureText,
  metMissingNetwork,
  unpulledBaseImage,
} from '../../src/benchmark/container-images.js';

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

  it('a failed build says why (its failing step’s last lines), not Docker’s legacy-builder notice', () => {
    // As `docker build --network none` printed it for a Dockerfile that apt-installs, measured here.
    const stdout =
      'Step 3/4 : RUN apt-get update && apt-get install -y jq\n' +
      "\x1b[91mW\x1b[0m\x1b[91m: \x1b[0m\x1b[91mFailed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary failure resolving 'deb.debian.org'\x1b[0m\x1b[91m\n" +
      '\x1b[91mW\x1b[0m\x1b[91m: \x1b[0m\x1b[91mSome index files failed to download.\x1b[0m\n' +
      'Reading package lists...\nBuilding dependency tree...\nReading state information...\n' +
      '\x1b[91mE\x1b[0m\x1b[91m: \x1b[0m\x1b[91mUnable to locate package jq\n\x1b[0m';
    const stderr =
      'DEPRECATED: The legacy builder is deprecated and will be removed in a future release.\n' +
      '            Install the buildx component to build images with BuildKit:\n' +
      '            https://docs.docker.com/go/buildx/\n\n' +
      "The command '/bin/sh -c apt-get update && apt-get install -y jq' returned a non-zero code: 100\n";
    expect(engineFailureText(stdout, stderr)).toBe(
      [
        "W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary failure resolving 'deb.debian.org'",
        'W: Some index files failed to download.',
        'Reading package lists...',
        'Building dependency tree...',
        'Reading state information...',
        'E: Unable to locate package jq',
        "The command '/bin/sh -c apt-get update && apt-get install -y jq' returned a non-zero code: 100",
      ].join('\n'),
    );
  });

  it('tells a build that met the missing network (the hint to trust the dataset) from one that failed otherwise', () => {
    expect(
      metMissingNetwork(
        "W: Failed to fetch http://deb.debian.org/…  Temporary failure resolving 'deb.debian.org'",
      ),
    ).toBe(true);
    expect(
      metMissingNetwork(
        'ERROR: Could not find a version that satisfies the requirement (Failed to establish a new connection)',
      ),
    ).toBe(true);
    expect(
      metMissingNetwork('COPY failed: forbidden path outside the build context: ../../../../etc/shadow ()'),
    ).toBe(false);
    expect(
      metMissingNetwork(
        'COPY failed: file not found in build context or excluded by .dockerignore: stat etc/shadow',
      ),
    ).toBe(false);
  });

  it('a base image the engine could not pull is named as such, not as a step that met the missing network', () => {
    // As `docker build` printed it for a real Terminal-Bench task pinned to a registry's image, measured here.
    const base =
      'public.ecr.aws/docker/library/debian:bookworm-slim@sha256:4724b8cc51e33e398f0e2e15e18d5ec2851ff0c2280647e1310bc1642182655d';
    const text = engineFailureText(
      `Sending build context to Docker daemon  53.25kB\nStep 1/15 : FROM ${base}\n`,
      'Get "https://public.ecr.aws/v2/": dial tcp: lookup public.ecr.aws on 10.255.255.53:53: no such host\n',
    );
    expect(text).toBe(
      `Step 1/15 : FROM ${base}\nGet "https://public.ecr.aws/v2/": dial tcp: lookup public.ecr.aws on 10.255.255.53:53: no such host`,
    );
    // As the engine command's error carries it.
    expect(unpulledBaseImage(`/usr/local/bin/docker build failed: ${text}`)).toBe(base);
    // A later step failing is that step's failure, even after an earlier FROM.
    expect(
      unpulledBaseImage(`Step 1/4 : FROM ${base}\n ---> 1a2b\nStep 3/4 : RUN apt-get update\nE: failed`),
    ).toBeNull();
    expect(unpulledBaseImage('Step 2/9 : from debian AS build\nmanifest unknown')).toBe('debian');
  });
});
