// What a run-once pod prints in the simulator and the termination message the kubelet makes of it:
// sim/world/one-shot-output.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { oneShotLog, terminationMessage } from '../../../sim/world/one-shot-output.js';

void describe('oneShotLog', () => {
  const cases: readonly [string, readonly string[], Record<string, string>, readonly string[]][] = [
    ['plain echo', ['sh', '-c', 'echo checking kvm'], {}, ['checking kvm']],
    ['env expanded', ['sh', '-c', 'echo "value $V"'], { V: 'x1' }, ['value x1']],
    ['unset variable is empty', ['sh', '-c', 'echo "[$NOPE]"'], {}, ['[]']],
    ['assignment from a substitution', ['sh', '-c', 'A=$(echo one); echo "$A.two"'], {}, ['one.two']],
    ['plain assignment', ['sh', '-c', 'A=one; echo $A'], {}, ['one']],
    ['stops at exit', ['sh', '-c', 'echo a; exit 2; echo b'], {}, ['a']],
    [
      'an unmodelled command prints nothing',
      ['sh', '-c', 'test -e /dev/kvm || echo missing; echo end'],
      {},
      ['end'],
    ],
    ['&& after echo runs', ['sh', '-c', 'echo a && echo b'], {}, ['a', 'b']],
    ['echo into a file prints nothing', ['sh', '-c', 'echo a >> /tmp/f'], {}, []],
    ['not a shell', ['/bin/check', '--all'], {}, []],
    ['a script the parser refuses', ['sh', '-c', 'echo a | cat'], {}, []],
  ];
  for (const [name, words, env, lines] of cases) {
    void it(name, () => assert.deepEqual(oneShotLog(words, env), lines));
  }
});

void describe('terminationMessage', () => {
  void it('File (the default) reports nothing the container printed', () => {
    assert.equal(terminationMessage('File', 3, ['boom']), undefined);
    assert.equal(terminationMessage(undefined, 3, ['boom']), undefined);
  });
  void it('FallbackToLogsOnError reports the log of a failed container only', () => {
    assert.equal(terminationMessage('FallbackToLogsOnError', 3, ['a', 'b']), 'a\nb');
    assert.equal(terminationMessage('FallbackToLogsOnError', 0, ['a']), undefined);
    assert.equal(terminationMessage('FallbackToLogsOnError', 1, []), undefined);
  });
  void it('keeps the last 80 lines, at most 2048 bytes', () => {
    const lines = Array.from({ length: 100 }, (_, index) => `line ${index}`);
    const message = terminationMessage('FallbackToLogsOnError', 1, lines) ?? '';
    assert.equal(message.split('\n').length, 80);
    assert.ok(message.startsWith('line 20\n') && message.endsWith('line 99'));
    const long = terminationMessage('FallbackToLogsOnError', 1, ['x'.repeat(3000), 'end']) ?? '';
    assert.equal(Buffer.byteLength(long), 2048);
    assert.ok(long.endsWith('\nend'));
  });
});
