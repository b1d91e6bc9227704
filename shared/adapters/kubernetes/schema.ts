/**
 * zod schemas for the raw JSON the adapter parses itself: the `Status` body of API server errors, which
 * client-node hands over as unparsed text.
 */
import { z } from 'zod';

/**
 * One entry of `details.causes`. The Go field is `Type` but its JSON name is `reason`; some writers
 * (and older docs) use `type`, so both are read.
 */
const StatusCause = z.object({
  reason: z.string().optional(),
  type: z.string().optional(),
  message: z.string().optional(),
  field: z.string().optional(),
});

/** The `Status` object every API server error carries (only the fields we decide on). */
export const KubeStatus = z.object({
  message: z.string().optional(),
  reason: z.string().optional(),
  code: z.number().optional(),
  details: z
    .object({
      name: z.string().optional(),
      kind: z.string().optional(),
      causes: z.array(StatusCause).optional(),
      retryAfterSeconds: z.number().optional(),
    })
    .optional(),
});
export type KubeStatus = z.infer<typeof KubeStatus>;
