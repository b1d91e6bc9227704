/**
 * What the readers of a run's custom status (the HTTP API, the CLI's progress, stop and --resume) show of
 * it: the fields every orchestration's status shares (RefreshStatus, the cluster's, the debounce's), read
 * through a schema instead of a cast. A field of another type is left out, not trusted.
 */
import { z } from 'zod';

const Text = z.string().optional().catch(undefined);

const RunStatusView = z
  .object({
    cluster: Text,
    pool: Text,
    step: Text,
    detail: Text,
    node: Text,
    since: Text,
    runId: Text,
  })
  .catch({});

export type RunStatusView = z.output<typeof RunStatusView>;

/** The shared fields of a custom status (an empty view for none or anything else). */
export function runStatusOf(customStatus: unknown): RunStatusView {
  return RunStatusView.parse(customStatus ?? {});
}
