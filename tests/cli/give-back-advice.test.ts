// Every place a refresh ends without its node given back names the same way back.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { giveBackAdvice } from '../../cli/give-back-advice.js';
import { leavingAdvice } from '../../cli/interrupt.js';

void describe('giveBackAdvice', () => {
  void it('names release at once for a gone process, else after the lease expired, and the others', () => {
    assert.equal(
      giveBackAdvice('agents'),
      '`vmss-prototype release --pool agents` gives back what a dead run of the pool holds (its node first): ' +
        'at once when that run was a refresh on this machine whose process is gone, otherwise once its lease ' +
        "expired (within 15 minutes); so does any later refresh of the pool, and the function app's reaper " +
        '(every 5 minutes) where the app manages this cluster',
    );
  });

  void it('is what an interrupted refresh prints when it leaves its run behind', () => {
    const text = leavingAdvice(
      [
        {
          instanceId: 'refresh:prod:agents',
          pool: 'agents',
          topLevel: 'refresh:prod:agents',
        },
      ],
      '.runs',
    );
    assert.match(text, /continue it: vmss-prototype refresh --resume refresh:prod:agents --state-dir \.runs/);
    assert.ok(
      text.includes(`or give back what it started once this command exited: ${giveBackAdvice('agents')}`),
      text,
    );
  });
});
