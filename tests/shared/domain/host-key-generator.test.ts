/** The first-boot SSH host key generator the scrub installs (shared/domain/host-key-generator.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { hostKeyGeneratorCommands } from '../../../shared/domain/host-key-generator.js';

void describe('hostKeyGeneratorCommands', () => {
  void it('installs a first-boot SSH host key generator that every sshd unit pulls in', () => {
    const commands = hostKeyGeneratorCommands('/mnt/copy');

    assert.equal(
      commands[0],
      'mkdir -p /mnt/copy/etc/systemd/system/ssh.service.d /mnt/copy/etc/systemd/system/sshd.service.d /mnt/copy/etc/systemd/system/sshd@.service.d',
    );
    assert.match(
      commands[1] ?? '',
      /'ExecStart=\/usr\/bin\/ssh-keygen -A' > \/mnt\/copy\/etc\/systemd\/system\/vmss-prototype-ssh-host-keys\.service$/,
    );
    assert.match(commands[1] ?? '', /'ConditionPathExistsGlob=!\/etc\/ssh\/ssh_host_\*_key'/);
    for (const unit of ['ssh', 'sshd', 'sshd@']) {
      assert.ok(
        commands.some((command) =>
          command.includes(
            `'Wants=vmss-prototype-ssh-host-keys.service' 'After=vmss-prototype-ssh-host-keys.service' > /mnt/copy/etc/systemd/system/${unit}.service.d/`,
          ),
        ),
        unit,
      );
    }
  });
});
