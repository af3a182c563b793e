import { describe, expect, it } from 'vitest';

import {
  destinationClass,
  isPrivateAddress,
  isPublicDestination,
} from '../../src/proxy/destination-class.js';

describe('the class of a destination', () => {
  it('reads an IPv4 address in every spelling a URL parser accepts', () => {
    for (const spelling of [
      '127.0.0.1',
      '127.1',
      '0x7f.0.0.1',
      '0x7f.1',
      '2130706433',
      '017700000001',
      '127.0.0.1.',
    ])
      expect(destinationClass(spelling), spelling).toMatchObject({ kind: 'loopback', address: '127.0.0.1' });
    expect(destinationClass('0')).toMatchObject({ kind: 'unspecified', address: '0.0.0.0' });
  });

  it('reads IPv6 with or without brackets, and IPv4 carried inside IPv6 as that IPv4 address', () => {
    expect(destinationClass('[::1]')).toMatchObject({ kind: 'loopback', address: '::1' });
    expect(destinationClass('::1')).toMatchObject({ kind: 'loopback', address: '::1' });
    expect(destinationClass('::ffff:127.0.0.1')).toMatchObject({
      kind: 'loopback',
      address: '::ffff:7f00:1',
    });
    expect(destinationClass('[64:ff9b::a9fe:a9fe]').kind).toBe('metadata');
    expect(destinationClass('2002:0a00:0005::').kind).toBe('private');
    expect(destinationClass('fd00:ec2::254').kind).toBe('metadata');
    expect(destinationClass('fd12::1').kind).toBe('private');
    expect(destinationClass('fe80::1').kind).toBe('link-local');
    expect(destinationClass('ff02::1').kind).toBe('multicast');
    expect(destinationClass('::').kind).toBe('unspecified');
    expect(destinationClass('::ffff:8.8.8.8').kind).toBe('public');
    expect(destinationClass('2a04:4e42::223').kind).toBe('public');
  });

  it('names the range of a non-public IPv4 address, metadata addresses before their ranges', () => {
    expect(destinationClass('169.254.169.254')).toEqual({
      kind: 'metadata',
      address: '169.254.169.254',
      why: 'a cloud metadata address (169.254.169.254/32)',
    });
    expect(destinationClass('169.254.1.1').kind).toBe('link-local');
    expect(destinationClass('100.100.100.200').kind).toBe('metadata');
    expect(destinationClass('10.0.0.5')).toMatchObject({
      kind: 'private',
      why: 'a private address (10.0.0.0/8)',
    });
    for (const address of ['172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', '198.18.0.1'])
      expect(destinationClass(address).kind, address).toBe('private');
    for (const address of ['192.0.2.1', '240.0.0.1', '255.255.255.255'])
      expect(destinationClass(address).kind, address).toBe('reserved');
    for (const address of ['8.8.8.8', '172.32.0.1', '151.101.0.223'])
      expect(destinationClass(address).kind, address).toBe('public');
  });

  it('knows the names set aside for the machine, its network and the metadata services', () => {
    expect(destinationClass('localhost').kind).toBe('loopback');
    expect(destinationClass('api.LOCALHOST.').kind).toBe('loopback');
    expect(destinationClass('metadata.google.internal').kind).toBe('metadata');
    expect(destinationClass('metadata').kind).toBe('metadata');
    expect(destinationClass('db.lab.internal')).toMatchObject({
      kind: 'private',
      why: 'a name for local use (*.internal)',
    });
    expect(destinationClass('printer.local').kind).toBe('private');
    expect(destinationClass('nas.home.arpa').kind).toBe('private');
    expect(destinationClass('redis').kind).toBe('private');
    for (const name of ['pypi.org', 'metadata.example.com', 'localhost.example.org', 'files.rcsb.org'])
      expect(isPublicDestination(name), name).toBe(true);
  });

  it('calls invalid what a URL parser would read as user info, a path, an escape, or no address at all', () => {
    for (const host of ['evil.com@127.0.0.1', '127.0.0.1/x', '%31.0.0.1', '1.2.3.999', '', 'a b'])
      expect(destinationClass(host).kind, host).toBe('invalid');
  });
});

describe('private addresses, which no listed name may resolve to', () => {
  it('are every address but a public one, and anything that is not an address', () => {
    for (const address of [
      '127.0.0.1',
      '127.8.9.10',
      '10.1.2.3',
      '169.254.169.254',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      'not an address',
      'pypi.org',
    ])
      expect(isPrivateAddress(address), address).toBe(true);
    for (const address of ['151.101.0.223', '172.32.0.1', '8.8.8.8', '2a04:4e42::223', '::ffff:8.8.8.8'])
      expect(isPrivateAddress(address), address).toBe(false);
  });
});
