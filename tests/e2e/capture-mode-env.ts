/** Sets `capture.mode` of every cluster in a product environment (VMSSP_CLUSTERS), for runs in a child process. */
export function withCaptureMode(
  env: Readonly<Record<string, string | undefined>>,
  mode: string | undefined,
): Record<string, string | undefined> {
  const changed = { ...env };
  if (mode === undefined) return changed;
  const clusters = JSON.parse(changed['VMSSP_CLUSTERS'] ?? '[]') as { capture?: Record<string, unknown> }[];
  for (const cluster of clusters) cluster.capture = { ...cluster.capture, mode };
  changed['VMSSP_CLUSTERS'] = JSON.stringify(clusters);
  return changed;
}
