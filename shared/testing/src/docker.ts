/**
 * Whether testcontainers can reach a container engine (Docker socket,
 * DOCKER_HOST, Podman, Colima, ...). Suites that need a server start one only
 * when this is true, and report themselves as skipped otherwise.
 */
export async function containerRuntimeAvailable(): Promise<boolean> {
  try {
    // Loaded on demand: testcontainers takes a noticeable time to import, and
    // most suites that import @kb/testing never need it.
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}
