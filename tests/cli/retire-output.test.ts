// `retire` output: a header with the outcome and reason, the budget and window, then a node-by-node table
// whose detail wraps in readable lines (or goes under its row when the terminal is narrow).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { RetireResult } from '../../cli/commands.js';
import { render } from '../../cli/output.js';
import type { PoolRetirementResult } from '../../shared/application/retirement-contracts.js';

const KEPT =
  'due (generation 2026.1101.10000 is 2 generations behind), but kept: pod web-0 carries ' +
  'karpenter.sh/do-not-disrupt: "true"; remove the mark to let it go';

const POOL: PoolRetirementResult = {
  cluster: 'prod',
  pool: 'agents',
  outcome: 'retired',
  reason: 'retired 1 node of an older generation; 1 waits for the next window (the budget of 1 is used)',
  newest: '2026.1120.31500',
  capacity: 4,
  budget: { allowed: 1, usedInWindow: 0 },
  window: { openedAt: '2026-11-28T02:00:00Z', closesAt: '2026-11-28T06:00:00Z' },
  nextWindowAt: '2026-12-05T02:00:00Z',
  nodes: [
    {
      node: 'k8s-agents-12345678-vmss000000',
      generation: '2026.1101.10000',
      outcome: 'retired',
      detail: 'generation 2026.1101.10000 is older than 30d',
      replacement: 'k8s-agents-12345678-vmss000004',
    },
    {
      node: 'k8s-agents-12345678-vmss000001',
      generation: '2026.1101.10000',
      outcome: 'waiting',
      detail: "past this window's budget (1 node)",
    },
    { node: 'k8s-agents-12345678-vmss000002', generation: '2026.1101.10000', outcome: 'kept', detail: KEPT },
    {
      node: 'k8s-agents-12345678-vmss000003',
      generation: '2026.1120.31500',
      outcome: 'given-back',
      detail: 'its drain did not finish within 1h: PodDisruptionBudget db-pdb allows no disruption',
    },
    {
      node: 'k8s-agents-12345678-vmss000005',
      generation: '2026.1120.31500',
      outcome: 'stays',
      detail: 'the newest generation',
    },
  ],
};

function result(pools: readonly PoolRetirementResult[] = [POOL]): RetireResult {
  return { kind: 'retire', pools, failures: [] };
}

function squash(text: string): string {
  return text.replaceAll(/\s+/g, '');
}

void describe('render: retire', () => {
  void it('a header with the pool, outcome and reason, then the budget and windows', () => {
    const lines = render(result(), { width: 200 }).split('\n');
    assert.equal(
      lines[0],
      'prod/agents: retired: retired 1 node of an older generation; 1 waits for the next window (the budget of 1 is used)',
    );
    assert.equal(
      lines[1],
      '  new nodes get 2026.1120.31500; capacity 4; budget: 1 per window, 0 used before this run; ' +
        'window 2026-11-28T02:00:00Z to 2026-11-28T06:00:00Z; next window 2026-12-05T02:00:00Z',
    );
  });

  void it('on demand, says the run takes one node at a time instead of a budget', () => {
    const onDemand = result();
    const [pool] = onDemand.pools;
    assert.ok(pool);
    const { window: _window, nextWindowAt: _next, ...rest } = pool;
    const text = render({ ...onDemand, pools: [{ ...rest, generation: '2026.1101.10000' }] }, { width: 200 });
    assert.match(
      text,
      /^ {2}generation 2026\.1101\.10000; new nodes get 2026\.1120\.31500; capacity 4; on demand: one node at a time$/m,
    );
    assert.doesNotMatch(text, /budget:/);
  });

  void it('one row per node: generation, what happens in words, the detail and the replacement', () => {
    const text = render(result(), { width: 200 });
    const lines = text.split('\n');
    assert.match(lines[2] ?? '', /^ {2}NODE +GENERATION +WHAT HAPPENS +DETAIL$/);
    assert.match(
      text,
      /^ {2}k8s-agents-12345678-vmss000000 +2026\.1101\.10000 +retired +generation 2026\.1101\.10000 is older than 30d; replacement k8s-agents-12345678-vmss000004$/m,
    );
    assert.match(
      text,
      /^ {2}k8s-agents-12345678-vmss000001 +2026\.1101\.10000 +waiting +past this window's/m,
    );
    assert.match(text, /^ {2}k8s-agents-12345678-vmss000003 +2026\.1120\.31500 +given back +its drain/m);
    assert.match(
      text,
      /^ {2}k8s-agents-12345678-vmss000005 +2026\.1120\.31500 +stays +the newest generation$/m,
    );
    assert.ok(squash(text).includes(squash(KEPT)));
  });

  void it('wraps the detail in lines of many words within the width, never a word per line', () => {
    for (const width of [200, 120, 100, 80]) {
      const text = render(result(), { width });
      const lines = text.split('\n');
      for (const line of lines) assert.ok(line.length <= width, `${width}: ${line.length}: ${line}`);
      assert.ok(squash(text).includes(squash(KEPT)), `${width}: every word of the detail is there`);
      // The kept node's detail: from its row up to the next node's row.
      const from = lines.findIndex((line) => line.includes('vmss000002'));
      const to = lines.findIndex((line) => line.includes('vmss000003'));
      const detailLines = to - from;
      const words = KEPT.split(' ').length;
      assert.ok(
        detailLines <= Math.ceil(words / 3),
        `${width}: ${detailLines} lines for ${words} words:\n${lines.slice(from, to).join('\n')}`,
      );
    }
  });

  void it('a narrow terminal puts each detail under its row instead of a squeezed column', () => {
    const text = render(result(), { width: 80 });
    assert.match(text, /^ {2}NODE +GENERATION +WHAT HAPPENS$/m);
    assert.match(text, /^ {2}k8s-agents-12345678-vmss000002 +2026\.1101\.10000 +kept\n {6}due \(generation/m);
  });

  void it('a refusal without nodes is its header alone; a failed run says so', () => {
    const refused: PoolRetirementResult = {
      cluster: 'prod',
      pool: 'agents',
      outcome: 'refused',
      reason: 'scheduled retirement is off for pool agents',
      nodes: [],
    };
    assert.equal(
      render({ ...result([refused]), failures: [{ instanceId: 'retire:prod:x', message: 'boom' }] }),
      'prod/agents: refused: scheduled retirement is off for pool agents\n\nrun retire:prod:x failed: boom',
    );
  });
});
