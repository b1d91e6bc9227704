/**
 * A disk model (os-disk.ts) as a directory tree and back: the real shell (real-shell.ts) writes the
 * node's root disk, and the data disks attached to it (real-shell-disks.ts), out as trees a script works
 * on with the machine's own tools, then reads them back and says what changed.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import type { DiskContent } from '../arm/compute-state.js';

/** Top-level directories of the sandbox that are not the disk (mount points bwrap makes). */
export const NOT_THE_DISK = new Set([
  'usr',
  'bin',
  'sbin',
  'lib',
  'lib64',
  'lib32',
  'libx32',
  'proc',
  'dev',
  'tmp',
  'run',
]);

/** The container runtime's image store is on the disk: a marker file stands for the images it holds. */
export const IMAGES_MARKER = '/var/lib/containerd/.simulator-images';

/** The directories every Linux root filesystem has (the model keeps only files; a script expects these). */
const SKELETON = [
  'etc',
  'root',
  'home',
  'opt',
  'srv',
  'mnt',
  'media',
  'var/log',
  'var/lib',
  'var/tmp',
  'var/cache',
  'var/spool',
];

/** Writes the disk out under `tree`: its files, the skeleton directories and the image store's marker. */
export function materialise(tree: string, disk: DiskContent): void {
  for (const directory of SKELETON) mkdirSync(join(tree, directory), { recursive: true });
  const files = {
    ...disk.files,
    ...(disk.images.length > 0 ? { [IMAGES_MARKER]: disk.images.join('\n') } : {}),
  };
  for (const [path, content] of Object.entries(files)) {
    if (!path.startsWith('/') || NOT_THE_DISK.has(path.split('/')[1] ?? '')) continue;
    const target = join(tree, path);
    try {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, content);
    } catch {
      // A path that is both a file and a directory in the model cannot be written out; it is kept as it is.
    }
  }
}

/** The regular files under `tree`, by absolute path (symbolic links and special files are not the model's). */
export function readTree(tree: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (directory: string, prefix: string): void => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      if (prefix === '' && NOT_THE_DISK.has(entry.name)) continue;
      const path = `${prefix}/${entry.name}`;
      const full = join(directory, entry.name);
      if (entry.isDirectory()) walk(full, path);
      else if (entry.isFile()) files[path] = readFileSync(full, 'utf8');
    }
  };
  walk(tree, '');
  return files;
}

/** What changed; a removal under a `scrub-leaves` path is undone (the file stays as it was). */
export function compareTrees(
  before: Readonly<Record<string, string>>,
  after: Record<string, string>,
  leaves: readonly string[],
): { files: Record<string, string>; changed: string[]; appended: string[] } {
  const kept = (path: string): boolean =>
    leaves.some((leave) => path === leave || path.startsWith(`${leave}/`));
  const files: Record<string, string> = {};
  const changed: string[] = [];
  const appended: string[] = [];
  for (const [path, content] of Object.entries(before)) {
    if (NOT_THE_DISK.has(path.split('/')[1] ?? '')) files[path] = content;
    else if (!(path in after)) {
      if (kept(path)) files[path] = content;
      else changed.push(path);
    }
  }
  for (const [path, content] of Object.entries(after)) {
    files[path] = content;
    const old = before[path];
    if (old === content) continue;
    if (old === undefined || (content.startsWith(old) && content.length > old.length)) appended.push(path);
    else changed.push(path);
  }
  return { files, changed, appended };
}

/** What a script left in `tree`, against the disk it was written out from. */
export function readDiskBack(
  tree: string,
  before: DiskContent,
  leaves: readonly string[],
): { files: Record<string, string>; imagesRemoved: boolean; changed: string[]; appended: string[] } {
  const after = readTree(tree);
  const imagesRemoved = before.images.length > 0 && !(IMAGES_MARKER in after);
  delete after[IMAGES_MARKER];
  return { ...compareTrees(before.files, after, leaves), imagesRemoved };
}
