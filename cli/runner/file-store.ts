// Crash-safe instance store: one `<dir>/<instanceId>.json` per instance, replaced atomically
// (write a temp file, fsync, rename) so a SIGKILL at any moment leaves the old or the new record.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

import { InstanceRecord, type InstanceStore } from './store.js';

export interface FileStoreOptions {
  /** Flush each record to disk before the rename (survives power loss, not only process death). */
  fsync?: boolean;
}

const SUFFIX = '.json';

/**
 * Instance ids are Azure-valid (no `/ \ ? #`), but may contain `:` (sub-orchestration ids) and
 * other characters some file systems reject, so they are percent-encoded in file names.
 */
function fileName(instanceId: string): string {
  return `${encodeURIComponent(instanceId)}${SUFFIX}`;
}

export function createFileStore(dir: string, options: FileStoreOptions = {}): InstanceStore {
  const fsync = options.fsync ?? true;
  let ready: Promise<unknown> | undefined;
  function ensureDir(): Promise<unknown> {
    ready ??= mkdir(dir, { recursive: true });
    return ready;
  }
  return {
    async load(instanceId) {
      const file = path.join(dir, fileName(instanceId));
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw new Error(`reading instance ${instanceId} from ${file}`, { cause: error });
      }
      const parsed = InstanceRecord.safeParse(JSON.parse(text));
      if (!parsed.success) {
        throw new Error(`reading instance ${instanceId} from ${file}: ${parsed.error.message}`);
      }
      return parsed.data;
    },
    async save(record) {
      // Serialize before the first await: the caller may keep mutating the record afterwards.
      const text = JSON.stringify(record);
      await ensureDir();
      const target = path.join(dir, fileName(record.instanceId));
      const temp = path.join(
        dir,
        `.${fileName(record.instanceId)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
      );
      const handle = await open(temp, 'w');
      try {
        await handle.writeFile(text, 'utf8');
        if (fsync) await handle.sync();
      } finally {
        await handle.close();
      }
      try {
        await rename(temp, target);
      } catch (error) {
        await unlink(temp).catch(() => undefined);
        throw new Error(`saving instance ${record.instanceId} to ${target}`, { cause: error });
      }
    },
    async remove(instanceId) {
      await unlink(path.join(dir, fileName(instanceId))).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      });
    },
    async list() {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      }
      return names
        .filter((name) => name.endsWith(SUFFIX) && !name.startsWith('.'))
        .map((name) => decodeURIComponent(name.slice(0, -SUFFIX.length)))
        .sort();
    },
  };
}
