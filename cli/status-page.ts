/**
 * `vmss-prototype status --html <file>` and `status --serve <port>`: the status page written to
 * a file, or served on 127.0.0.1 (for the simulator) and rendered afresh for every request. Loaded only by
 * `status` when one of the two flags is given.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { dirname, resolve } from 'node:path';

import {
  renderStatusPage,
  STATUS_PAGE_CONTENT_TYPE,
  STATUS_PAGE_CSP,
  type StatusPageInput,
} from '../shared/application/status-page/render-status-page.js';
import { messageOf } from '../shared/domain/errors.js';
import { UsageError } from './args.js';
import type { StatusResult } from './commands.js';

/** The page of a status result, read at `now`. */
export function statusPageOf(result: StatusResult, now: Date): string {
  const input: StatusPageInput = { generatedAt: now.toISOString(), clusters: result.clusters };
  return renderStatusPage(input);
}

/**
 * Refuses a --html target that cannot be written, before anything starts: a directory, a missing or
 * read-only folder, a read-only file.
 */
export function checkHtmlTarget(file: string): void {
  const path = resolve(file);
  const folder = dirname(path);
  let stats;
  try {
    stats = statSync(path);
  } catch {
    stats = undefined;
  }
  if (stats?.isDirectory() === true) {
    throw new UsageError(
      `--html ${file} is a directory: give a file name, e.g. ${file}/status.html`,
      'status',
    );
  }
  try {
    if (!statSync(folder).isDirectory()) throw new Error('not a directory');
  } catch {
    throw new UsageError(
      `--html ${file}: folder ${folder} does not exist: create it or give another path`,
      'status',
    );
  }
  try {
    accessSync(stats === undefined ? folder : path, constants.W_OK);
  } catch {
    throw new UsageError(
      `--html ${file} is not writable (${stats === undefined ? `folder ${folder}` : 'the file'} is read-only): give a path you can write`,
      'status',
    );
  }
}

/** Writes the page next to its target and renames it into place: a reader never sees half a page. */
export async function writeStatusPage(file: string, page: string): Promise<string> {
  const path = resolve(file);
  const partial = `${path}.${process.pid}.partial`;
  await writeFile(partial, page, 'utf8');
  await rename(partial, path);
  return path;
}

export interface StatusPageServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves the page on 127.0.0.1 only (never another interface): GET / renders it afresh from `read`; one
 * read at a time (two requests in the same moment wait for each other). 404 for other paths, 405 for
 * other methods, 500 with the reason when the status cannot be read.
 */
export async function serveStatusPage(
  port: number,
  read: () => Promise<string>,
  log: (line: string) => void,
): Promise<StatusPageServer> {
  let queue: Promise<unknown> = Promise.resolve();
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
      response.end('only GET\n');
      return;
    }
    if (path !== '/' && path !== '/status.html') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      response.end('the status page is at /\n');
      return;
    }
    const next = queue.then(read);
    queue = next.catch(() => undefined);
    next.then(
      (page) => {
        response.writeHead(200, {
          'content-type': STATUS_PAGE_CONTENT_TYPE,
          'content-security-policy': STATUS_PAGE_CSP,
          'x-content-type-options': 'nosniff',
          'cache-control': 'no-store',
        });
        response.end(request.method === 'HEAD' ? undefined : page);
      },
      (error: unknown) => {
        const message = messageOf(error);
        log(`status page: reading the status failed: ${message}`);
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        response.end(`reading the status failed: ${message}\n`);
      },
    );
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new UsageError(
              `--serve ${port}: port ${port} is in use on 127.0.0.1: give another port (or 0 for any free one)`,
              'status',
            )
          : error.code === 'EACCES'
            ? new UsageError(
                `--serve ${port}: not allowed to listen on port ${port}: give a port from 1024 to 65535 (or 0)`,
                'status',
              )
            : error,
      );
    });
    server.listen(port, '127.0.0.1', () => resolveListen());
  });
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  return {
    url: `http://127.0.0.1:${bound}/`,
    close: () =>
      new Promise<void>((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
      }),
  };
}

/** Resolves on the first Ctrl-C (SIGINT) or SIGTERM; the handlers are removed again. */
export function untilInterrupted(): Promise<void> {
  return new Promise((resolveSignal) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolveSignal();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
