import { describe, expect, it } from 'vitest';

import { remoteAddSources } from '../../src/benchmark/dockerfile-sources.js';

// Measured here: `docker build --network none` of `ADD http://127.0.0.1:18999/secret.txt /secret.txt` baked a page
// served on the host's loopback into the image (the daemon fetches an ADD's URL itself, on the host's network). A
// dataset's Dockerfile that fetches so is skipped unless the dataset is trusted; these are the lines that count.
describe("a Dockerfile's ADD sources fetched by URL", () => {
  it('finds URLs, git remotes and variables in ADD, in any case, flags and forms', () => {
    const dockerfile = [
      'FROM debian:bookworm',
      'ADD http://127.0.0.1:8000/v1/models /models.json',
      'add --chown=1000:1000 https://169.254.169.254/latest/meta-data/ /meta',
      'ADD ["HTTP://10.0.0.5/x", "/y"]',
      'ADD git@github.com:org/repo.git /repo',
      'ARG URL=http://127.0.0.1:6379/',
      'ADD ${URL} /redis',
      'ONBUILD ADD ftp://internal/x /x',
      'ADD \\',
      '    http://127.0.0.1:9000/continued \\',
      '    /continued',
    ].join('\n');
    expect(remoteAddSources(dockerfile)).toEqual([
      { line: 2, source: 'http://127.0.0.1:8000/v1/models' },
      { line: 3, source: 'https://169.254.169.254/latest/meta-data/' },
      { line: 4, source: 'HTTP://10.0.0.5/x' },
      { line: 5, source: 'git@github.com:org/repo.git' },
      { line: 7, source: '${URL}' },
      { line: 8, source: 'ftp://internal/x' },
      { line: 9, source: 'http://127.0.0.1:9000/continued' },
    ]);
  });

  it('leaves local sources, COPY, RUN and comments alone, and follows the escape directive', () => {
    const dockerfile = [
      '# escape=`',
      'FROM debian:bookworm',
      '# ADD http://127.0.0.1/commented /x',
      'COPY http-client.py /app/',
      'RUN curl http://example.com/ > /x',
      'ADD --chmod=755 files/ archive.tar.gz /app/',
      'ADD `',
      '  http://127.0.0.1/escaped /x',
    ].join('\n');
    expect(remoteAddSources(dockerfile)).toEqual([{ line: 7, source: 'http://127.0.0.1/escaped' }]);
  });
});
