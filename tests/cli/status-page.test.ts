/**
 * `status --html` and `status --serve`: the flags' refusals, the --html target checks, the 127.0.0.1
 * server (fresh page per request, 404/405/500, a port in use), and the real CLI serving the simulator's
 * status until Ctrl-C.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { parseArgs, UsageError } from '../../cli/args.js';
import { checkHtmlTarget, serveStatusPage, writeStatusPage } from '../../cli/status-page.js';
import { STATUS_PAGE_CSP } from '../../shared/application/status-page/render-status-page.js';
import { CLI_ENTRY } from '../builders/cli-entry.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = CLI_ENTRY;

function refusal(argv: readonly string[]): string {
  try {
    parseArgs(argv);
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    return error.message;
  }
  assert.fail(`expected a usage error for ${argv.join(' ')}`);
}

void describe('status --html / --serve: flags', () => {
  void it('accepts a file and a port (0: any free one)', () => {
    const html = parseArgs(['status', '--html', 'out/page.html', '--sim']);
    assert.equal(html.kind === 'run' && html.options.html, 'out/page.html');
    const serve = parseArgs(['status', '--serve=0']);
    assert.equal(serve.kind === 'run' && serve.options.serve, 0);
    const json = parseArgs(['status', '--html', 'p.html', '--json']);
    assert.ok(json.kind === 'run' && json.options.json && json.options.html === 'p.html');
  });

  const cases: readonly (readonly [string[], RegExp])[] = [
    [['status', '--serve', '65536'], /--serve "65536" is not a port: give a whole number from 1 to 65535/],
    [['status', '--serve', '-1'], /--serve "-1" is not a port/],
    [['status', '--serve', 'http'], /--serve "http" is not a port/],
    [['status', '--serve', '80.5'], /--serve "80.5" is not a port/],
    [['status', '--html', 'a.html', '--serve', '8080'], /--html and --serve exclude each other/],
    [['status', '--serve', '8080', '--json'], /--json does not apply with --serve/],
    [['status', '--html'], /--html needs a value: --html <file>/],
    [['refresh', '--html', 'a.html'], /--html does not apply to refresh \(only to status\)/],
    [['plan', '--serve', '8080'], /--serve does not apply to plan \(only to status\)/],
  ];
  for (const [argv, expected] of cases) {
    void it(`refuses ${argv.join(' ')}`, () => assert.match(refusal(argv), expected));
  }
});

void describe('status --html: the target', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vmssp-page-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  void it('refuses a directory and a missing folder, naming the flag and the fix', () => {
    assert.throws(() => checkHtmlTarget(dir), /--html .* is a directory: give a file name/);
    assert.throws(
      () => checkHtmlTarget(join(dir, 'missing', 'page.html')),
      /--html .*: folder .*missing does not exist: create it or give another path/,
    );
  });

  void it('writes the page whole (no partial file left)', async () => {
    const target = join(dir, 'page.html');
    checkHtmlTarget(target);
    const written = await writeStatusPage(target, '<!doctype html><p>x</p>');
    assert.equal(await readFile(written, 'utf8'), '<!doctype html><p>x</p>');
  });
});

void describe('status --serve: the server', () => {
  void it('binds 127.0.0.1, renders per request, and answers 404, 405 and 500 plainly', async () => {
    let reads = 0;
    let fail = false;
    const logged: string[] = [];
    const server = await serveStatusPage(
      0,
      () => {
        reads++;
        return fail ? Promise.reject(new Error('API server away')) : Promise.resolve(`<p>read ${reads}</p>`);
      },
      (line) => logged.push(line),
    );
    try {
      assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
      const first = await fetch(server.url);
      assert.equal(first.status, 200);
      assert.equal(first.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(first.headers.get('content-security-policy'), STATUS_PAGE_CSP);
      assert.equal(await first.text(), '<p>read 1</p>');
      assert.equal(await (await fetch(server.url)).text(), '<p>read 2</p>', 'rendered afresh');
      assert.equal((await fetch(`${server.url}other`)).status, 404);
      assert.equal((await fetch(server.url, { method: 'POST' })).status, 405);
      fail = true;
      const failed = await fetch(server.url);
      assert.equal(failed.status, 500);
      assert.match(await failed.text(), /reading the status failed: API server away/);
      assert.ok(logged.some((line) => line.includes('API server away')));
    } finally {
      await server.close();
    }
  });

  void it('a port in use is a usage error naming --serve and the fix', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      await assert.rejects(
        serveStatusPage(
          port,
          () => Promise.resolve(''),
          () => undefined,
        ),
        (error: unknown) =>
          error instanceof UsageError &&
          error.message ===
            `--serve ${port}: port ${port} is in use on 127.0.0.1: give another port (or 0 for any free one)`,
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});

void describe('vmss-prototype status --sim --serve 0', () => {
  void it('serves the simulator status page until Ctrl-C, then stops cleanly', async () => {
    const child = spawn(process.execPath, [CLI, 'status', '--sim', '--serve', '0'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no URL within 120 s: ${stderr}`)), 120_000);
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          const match = /serving the status page at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(stderr);
          if (match?.[1] !== undefined) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        });
        child.once('exit', () => {
          clearTimeout(timer);
          reject(new Error(`the CLI exited: ${stderr}`));
        });
      });
      const response = await fetch(url);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-security-policy'), STATUS_PAGE_CSP);
      const html = await response.text();
      assert.ok(html.includes('Pool k8s-pool1-12345678-vmss'), "the sample cluster's pools");
      child.kill('SIGINT');
      assert.equal(await exited, 0, stderr);
      assert.match(stderr, /stopped serving the status page/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
