/** A container image a task needs, and the engine (`docker` or `podman`, a path or a name on PATH) that runs it. */
export interface ContainerImage {
  engine: string;
  image: string;
}

/** How the image is made ready: built from the task's Dockerfile, or pulled. */
export function containerImageArguments(
  engine: string,
  source: { dockerfile: string; context: string; tag: string } | { image: string },
): string[] {
  return 'image' in source
    ? [engine, 'pull', source.image]
    : [engine, 'build', '--tag', source.tag, '--file', source.dockerfile, source.context];
}
