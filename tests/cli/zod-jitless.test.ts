// The CLI turns zod's JIT off before its schemas are built (cli/zod-jitless.ts): same answers, no
// generated parser per object schema.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { globalConfig } from 'zod/v4/core';

void describe('zod without its JIT in the CLI', () => {
  void it('is set once the module is imported, and a schema built after it parses as before', async () => {
    await import('../../cli/zod-jitless.js');
    assert.equal(globalConfig.jitless, true);
    const { z } = await import('zod');
    const schema = z.object({ pool: z.string().min(1), nodes: z.array(z.string()).max(2) });
    assert.deepEqual(schema.parse({ pool: 'p', nodes: ['a'], extra: 1 }), { pool: 'p', nodes: ['a'] });
    const failed = schema.safeParse({ pool: '', nodes: ['a', 'b', 'c'] });
    assert.equal(failed.success, false);
    assert.deepEqual(
      failed.error.issues.map((issue) => issue.path.join('.')),
      ['pool', 'nodes'],
    );
  });
});
