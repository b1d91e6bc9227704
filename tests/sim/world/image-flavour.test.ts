/**
 * SSH host keys and the hostname per image flavour (sim/world/image-flavour.ts): the product's scrub runs
 * in the real shell over a donor's disk, then a clone boots from the result as each image kind would
 * (cloud-init Ubuntu, Flatcar-like with sshd-keygen, an image with neither). Cloud-init's per-instance
 * modules make a clone's keys and hostname its own even when the scrub left the donor's; without
 * cloud-init what the disk holds stays; without a generator the scrub's own unit must give sshd keys.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { buildPrepScript } from '../../../shared/domain/prep-script.js';
import type { DiskContent } from '../../../sim/arm/compute-state.js';
import { type Boot, boot } from '../../../sim/world/identity.js';
import { type ImageFlavour, UBUNTU_CLOUD_IMAGE } from '../../../sim/world/image-flavour.js';
import { freshDisk, sshHostKeyFor } from '../../../sim/world/os-disk.js';
import { runInRealShell } from '../../../sim/world/real-shell.js';
import { skipWithoutBwrap } from './bwrap-gate.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const DONOR = 'vm-donor';

const IMAGES: Record<string, ImageFlavour> = {
  'cloud-init Ubuntu': UBUNTU_CLOUD_IMAGE,
  'Flatcar-like (no cloud-init, sshd-keygen)': {
    ...UBUNTU_CLOUD_IMAGE,
    cloudInit: false,
    hostKeyGeneration: 'when-missing',
  },
  'no cloud-init, no key generator': { ...UBUNTU_CLOUD_IMAGE, cloudInit: false, hostKeyGeneration: 'never' },
};

function donorDisk(): DiskContent {
  return freshDisk({
    vmId: DONOR,
    nodeName: 'pool-000000',
    cluster: 'prod',
    flavour: 'aks-engine',
    joinToken: 't',
    images: [],
    joinedAtMs: NOW,
    image: 'ubuntu',
  });
}

/** Runs `script` over the donor's disk in the real shell and returns the disk it leaves. */
function scrubbed(script: string): DiskContent {
  const result = runInRealShell({
    argv: ['/bin/sh', '-c', script],
    disk: donorDisk(),
    hostname: 'pool-000000',
    nowMs: NOW,
  });
  assert.equal(result.ok, true, result.error);
  return { files: result.files, images: [] };
}

function bootClone(disk: DiskContent, image: ImageFlavour): Boot {
  return boot(disk, {
    vmId: 'vm-clone',
    computerName: 'pool-000001',
    flavour: 'aks-engine',
    image,
    cluster: 'prod',
    bootstrapTokenError: () => undefined,
    nowMs: NOW,
    joinToken: 't',
  });
}

const donorKeys = (): string[] =>
  ['ed25519', 'ecdsa', 'rsa'].map((type) => sshHostKeyFor(DONOR, `/etc/ssh/ssh_host_${type}_key`));

const productScript = (): string => buildPrepScript({ ancestry: 'test', powerOff: false });

void describe("image flavour: the product's scrub gives every clone host keys of its own", () => {
  for (const [name, image] of Object.entries(IMAGES)) {
    void it(`${name}: sshd has new keys, none of the donor's`, (t) => {
      if (skipWithoutBwrap(t)) return;
      const clone = bootClone(scrubbed(productScript()), image);

      assert.equal(clone.sshHostKeys.length, 3, JSON.stringify(clone.findings));
      for (const key of donorKeys()) assert.ok(!clone.sshHostKeys.includes(key));
      assert.deepEqual(
        clone.findings.filter((finding) => finding.kind === 'no-ssh-host-keys'),
        [],
      );
      assert.equal(clone.hostname, 'pool-000001');
    });
  }

  void it('no cloud-init, no generator: without the unit the scrub installs, sshd has no keys at all', (t) => {
    if (skipWithoutBwrap(t)) return;
    const script = productScript()
      .split('\n')
      .filter((line) => !/^(mkdir -p|printf) .*\/etc\/systemd\/system/.test(line))
      .join('\n');
    assert.notEqual(script, productScript(), 'the product script installs the generator');
    const clone = bootClone(
      scrubbed(script),
      IMAGES['no cloud-init, no key generator'] ?? UBUNTU_CLOUD_IMAGE,
    );

    assert.deepEqual(clone.sshHostKeys, []);
    assert.match(
      clone.findings.find((finding) => finding.kind === 'no-ssh-host-keys')?.detail ?? '',
      /no hostkeys available/,
    );
  });
});

void describe('image flavour: what a scrub that leaves the keys and the hostname passes on', () => {
  const leaky = (): string =>
    productScript().replace(' /etc/ssh/ssh_host_*', '').replace(' /etc/hostname', '');
  const cases: { name: string; image: ImageFlavour; duplicates: boolean }[] = [
    {
      name: 'cloud-init Ubuntu (ssh_deletekeys, no preserve_hostname)',
      image: UBUNTU_CLOUD_IMAGE,
      duplicates: false,
    },
    {
      name: 'cloud-init with ssh_deletekeys: false, preserve_hostname: true',
      image: { ...UBUNTU_CLOUD_IMAGE, sshDeleteKeys: false, preserveHostname: true },
      duplicates: true,
    },
    {
      name: 'Flatcar-like (no cloud-init)',
      image: IMAGES['Flatcar-like (no cloud-init, sshd-keygen)'] ?? UBUNTU_CLOUD_IMAGE,
      duplicates: true,
    },
  ];
  for (const { name, image, duplicates } of cases) {
    void it(`${name}: the donor's keys and hostname ${duplicates ? 'stay' : 'are replaced'}`, (t) => {
      if (skipWithoutBwrap(t)) return;
      const disk = scrubbed(leaky());
      assert.ok(disk.files['/etc/ssh/ssh_host_rsa_key'] !== undefined, 'the scrub left the keys');
      const clone = bootClone(disk, image);

      assert.equal(
        donorKeys().every((key) => clone.sshHostKeys.includes(key)),
        duplicates,
      );
      assert.equal(clone.hostname, duplicates ? 'pool-000000' : 'pool-000001');
    });
  }
});
