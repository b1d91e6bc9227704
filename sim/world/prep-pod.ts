/**
 * Recognises the one-shot "prepare the disk and power off" pod (and the same script sent through Run
 * Command), and reads what the script does, so the world can power the VM off and tests can check it.
 *
 * The rule: a pod is a host power-off pod when `spec.hostPID` is true, at least one container is
 * `securityContext.privileged`, and its command/args contain a host power-off: `poweroff`,
 * `systemctl poweroff|halt`, `shutdown -h|-P|--poweroff|--halt`, `halt -p` or `init 0`.
 */
import type { KubeObject } from '../contracts.js';

const POWER_OFF_RE =
  /(^|[\s;&|('"`])(poweroff\b|systemctl\s+(poweroff|halt)\b|shutdown\s+(-h|-P|--poweroff|--halt)\b|halt\s+-p\b|init\s+0\b)/;

interface Container {
  command?: unknown;
  args?: unknown;
  securityContext?: { privileged?: unknown };
}

function containersOf(pod: KubeObject): Container[] {
  const spec = (pod.spec ?? {}) as { containers?: unknown; initContainers?: unknown };
  const init: unknown[] = Array.isArray(spec.initContainers) ? (spec.initContainers as unknown[]) : [];
  const main: unknown[] = Array.isArray(spec.containers) ? (spec.containers as unknown[]) : [];
  const all = [...init, ...main];
  return all.filter((item): item is Container => typeof item === 'object' && item !== null);
}

function words(value: unknown): string[] {
  return Array.isArray(value) ? value.map((item) => String(item)) : [];
}

/** The pod's command lines, containers in order, command then args, joined with spaces. */
export function podScript(pod: KubeObject): string {
  return containersOf(pod)
    .map((container) => [...words(container.command), ...words(container.args)].join(' '))
    .filter((line) => line.length > 0)
    .join('\n');
}

export function powersHostOff(script: string): boolean {
  return POWER_OFF_RE.test(script);
}

export function isHostPowerOffPod(pod: KubeObject): boolean {
  const spec = (pod.spec ?? {}) as { hostPID?: unknown };
  if (spec.hostPID !== true) return false;
  const containers = containersOf(pod);
  if (!containers.some((container) => container.securityContext?.privileged === true)) return false;
  return powersHostOff(podScript(pod));
}

/** What a preparation script does to the disk, as far as the simulator can tell from its text. */
export type PrepEffect =
  | 'enters-host-namespaces'
  | 'appends-ancestry'
  | 'removes-hostname'
  | 'empties-machine-id'
  | 'removes-cloud-init-instance-data'
  | 'removes-waagent-history'
  | 'removes-old-journals'
  | 'powers-off';

const EFFECTS: readonly { effect: PrepEffect; pattern: RegExp }[] = [
  { effect: 'enters-host-namespaces', pattern: /nsenter\s[^\n;&|]*(-t\s*1\b|--target[= ]1\b)/ },
  { effect: 'appends-ancestry', pattern: />>\s*['"]?\/\S*ancestry/i },
  { effect: 'removes-hostname', pattern: /\brm\s[^\n;&|]*\/etc\/hostname\b/ },
  {
    effect: 'empties-machine-id',
    pattern:
      /(truncate\s+(-s\s*0|--size[= ]0)\s+[^\n;&|]*\/etc\/machine-id|(^|[^>])>\s*\/etc\/machine-id|cp\s+\/dev\/null\s+\/etc\/machine-id)/,
  },
  {
    effect: 'removes-cloud-init-instance-data',
    pattern: /\brm\s[^\n;&|]*\/var\/lib\/cloud\b|cloud-init\s+clean/,
  },
  { effect: 'removes-waagent-history', pattern: /\brm\s[^\n;&|]*\/var\/lib\/waagent\b/ },
  {
    effect: 'removes-old-journals',
    pattern: /journalctl\s[^\n;&|]*--vacuum|\brm\s[^\n;&|]*\/var\/log\/journal\b/,
  },
  { effect: 'powers-off', pattern: POWER_OFF_RE },
];

export function prepEffects(script: string): PrepEffect[] {
  return EFFECTS.filter(({ pattern }) => pattern.test(script)).map(({ effect }) => effect);
}
