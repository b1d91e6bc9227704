// Crash-safe instance store: one `<dir>/<instanceId>.json` per instance, replaced atomically (write a
// temp file, fsync, rename), and beside it `<instanceId>.journal`, to which the saves in between append
// what changed. A run saves after every event (hundreds of times); rewriting its whole history each time
// was a fifth of a CLI refresh's CPU. A SIGKILL at any moment still leaves the old or the new record: a
// line the kill cut short is not a line, and is ignored.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

import type { HistoryEvent } from './history.js';
import type { RecordedAction } from './store.js';
import { InstanceRecord, type InstanceStore } from './store.js';

export interface FileStoreOptions {
  /** Flush each record to disk before the rename (survives power loss, not only process death). */
  fsync?: boolean;
  /** Journal lines after which a save writes the whole record again (and empties the journal). */
  compactAfter?: number;
}

const SUFFIX = '.json';
const JOURNAL_SUFFIX = '.journal';
const COMPACT_AFTER = 32;

/**
 * One save in the journal: every field of the record but `history` and `actions`, which only grow within
 * an execution, so the line carries what was added since `historyFrom` and `actionsFrom`. `seq` chains
 * the lines to the whole record: it carries a random `journalSeq`, and each line the next number, so the
 * lines of a journal it replaced (a crash between the rename and the journal's removal) continue no chain
 * and are not applied.
 */
interface JournalLine {
  readonly seq: number;
  readonly historyFrom: number;
  readonly actionsFrom: number;
  readonly record: Omit<InstanceRecord, 'history' | 'actions'>;
  readonly history: HistoryEvent[];
  readonly actions: RecordedAction[];
}

/** What the last save of an instance wrote, in this process. */
interface Saved {
  readonly seq: number;
  readonly executionId: string;
  readonly historyLength: number;
  readonly actionsLength: number;
  readonly lines: number;
}

/**
 * Instance ids are Azure-valid (no `/ \ ? #`), but may contain `:` (sub-orchestration ids) and
 * other characters some file systems reject, so they are percent-encoded in file names.
 */
function fileName(instanceId: string): string {
  return `${encodeURIComponent(instanceId)}${SUFFIX}`;
}

function journalName(instanceId: string): string {
  return `${encodeURIComponent(instanceId)}${JOURNAL_SUFFIX}`;
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

async function unlinkIfPresent(file: string): Promise<void> {
  await unlink(file).catch((error: unknown) => {
    if (!isMissing(error)) throw error;
  });
}

/** The record as written, then every journal line that follows it in order; a torn last line is not one. */
function replayJournal(base: Record<string, unknown>, journal: string): unknown {
  let seq = typeof base['journalSeq'] === 'number' ? base['journalSeq'] : undefined;
  let record: Record<string, unknown> = base;
  const lines = journal.split('\n');
  // The text after the last newline is a line the writer did not finish (or nothing).
  lines.pop();
  for (const text of lines) {
    let line: JournalLine;
    try {
      line = JSON.parse(text) as JournalLine;
    } catch {
      break;
    }
    const history = record['history'];
    const actions = record['actions'];
    if (
      seq === undefined ||
      line.seq !== seq + 1 ||
      !Array.isArray(history) ||
      !Array.isArray(actions) ||
      line.historyFrom !== history.length ||
      line.actionsFrom > actions.length
    ) {
      break;
    }
    record = {
      ...line.record,
      history: [...(history as unknown[]), ...line.history],
      actions: [...(actions as unknown[]).slice(0, line.actionsFrom), ...line.actions],
    };
    seq = line.seq;
  }
  return record;
}

export function createFileStore(dir: string, options: FileStoreOptions = {}): InstanceStore {
  const fsync = options.fsync ?? true;
  const compactAfter = options.compactAfter ?? COMPACT_AFTER;
  const saved = new Map<string, Saved>();
  let ready: Promise<unknown> | undefined;
  function ensureDir(): Promise<unknown> {
    ready ??= mkdir(dir, { recursive: true });
    return ready;
  }

  async function writeWhole(record: InstanceRecord, text: string): Promise<void> {
    await ensureDir();
    const target = path.join(dir, fileName(record.instanceId));
    const temp = path.join(
      dir,
      `.${fileName(record.instanceId)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
    );
    await write(temp, 'w', text);
    try {
      await rename(temp, target);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw new Error(`saving instance ${record.instanceId} to ${target}`, { cause: error });
    }
    // Its lines are in the record now (and skipped by their seq if this unlink never happens).
    await unlinkIfPresent(path.join(dir, journalName(record.instanceId)));
  }

  /** Writes (`w`) or appends (`a`) the text, flushed to disk when `fsync` says so. */
  async function write(file: string, flags: 'w' | 'a', text: string): Promise<void> {
    const handle = await open(file, flags);
    try {
      await handle.writeFile(text, 'utf8');
      if (fsync) await handle.datasync();
    } finally {
      await handle.close();
    }
  }

  return {
    async load(instanceId) {
      const file = path.join(dir, fileName(instanceId));
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw new Error(`reading instance ${instanceId} from ${file}`, { cause: error });
      }
      const journal = await readFile(path.join(dir, journalName(instanceId)), 'utf8').catch(
        (error: unknown) => {
          if (isMissing(error)) return '';
          throw new Error(`reading the journal of instance ${instanceId}`, { cause: error });
        },
      );
      const record = replayJournal(JSON.parse(text) as Record<string, unknown>, journal);
      const parsed = InstanceRecord.safeParse(record);
      if (!parsed.success) {
        throw new Error(`reading instance ${instanceId} from ${file}: ${parsed.error.message}`);
      }
      // The next save writes the whole record: this process has not written its journal.
      saved.delete(instanceId);
      return parsed.data;
    },
    async save(record) {
      // Decided and serialized before the first await: the caller may keep mutating the record afterwards.
      const last = saved.get(record.instanceId);
      const appendable =
        last !== undefined &&
        last.lines < compactAfter &&
        last.executionId === record.executionId &&
        record.history.length >= last.historyLength &&
        record.actions.length >= last.actionsLength;
      // A whole record starts a new chain at a random number (48 bits: any journal it replaces continues
      // another); a journal line continues the chain.
      const seq = appendable ? last.seq + 1 : randomBytes(6).readUIntBE(0, 6);
      const next: Saved = {
        seq,
        executionId: record.executionId,
        historyLength: record.history.length,
        actionsLength: record.actions.length,
        lines: appendable ? last.lines + 1 : 0,
      };
      saved.set(record.instanceId, next);
      try {
        if (appendable) {
          const { history, actions, ...rest } = record;
          const line: JournalLine = {
            seq,
            historyFrom: last.historyLength,
            actionsFrom: last.actionsLength,
            record: rest,
            history: history.slice(last.historyLength),
            actions: actions.slice(last.actionsLength),
          };
          await write(path.join(dir, journalName(record.instanceId)), 'a', `${JSON.stringify(line)}\n`);
        } else {
          await writeWhole(record, JSON.stringify({ ...record, journalSeq: seq }));
        }
      } catch (error) {
        // Unknown what reached the disk: the next save writes the whole record.
        saved.delete(record.instanceId);
        throw error;
      }
    },
    async remove(instanceId) {
      saved.delete(instanceId);
      for (const name of [fileName(instanceId), journalName(instanceId)]) {
        await unlinkIfPresent(path.join(dir, name));
      }
    },
    async list() {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (error) {
        if (isMissing(error)) return [];
        throw error;
      }
      return names
        .filter((name) => name.endsWith(SUFFIX) && !name.startsWith('.'))
        .map((name) => decodeURIComponent(name.slice(0, -SUFFIX.length)))
        .sort();
    },
  };
}
