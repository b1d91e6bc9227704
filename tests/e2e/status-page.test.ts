/**
 * The status page in a real browser: a real refresh on the simulator (manual clock), the status
 * read by the real status orchestration, the page served by the CLI's `--serve` server on 127.0.0.1 and
 * opened in Debian's chromium through puppeteer-core. Checks what a person sees (pools, versions, run
 * timeline), that nothing overflows a 375 px phone screen, that hostile text stays text, and saves
 * screenshots under test-output/. One browser for the whole file.
 *
 * Skipped, saying why, only when /usr/bin/chromium is missing on a developer machine; under CI=true a
 * missing browser fails the test (.ci/run installs it).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { Browser, Page } from 'puppeteer-core';
import puppeteer from 'puppeteer-core';

import type { StatusResult } from '../../cli/commands.js';
import { serveStatusPage, statusPageOf } from '../../cli/status-page.js';
import { protectNode, readNodePriorState } from '../../shared/application/donor-node.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import { poolScope } from '../../shared/application/pool-holdings.js';
import { acquirePoolLease } from '../../shared/application/pool-lease.js';
import type { ClusterStatusRead, PoolStatus } from '../../shared/application/pool-status.js';
import type { ClusterRefreshResult, PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import {
  renderStatusPage,
  STATUS_PAGE_CSP,
} from '../../shared/application/status-page/render-status-page.js';
import type { EligibilityState } from '../../shared/application/status-page/view-model.js';
import { poolViewOf } from '../../shared/application/status-page/view-model.js';
import { LEASE_DURATION_SECONDS } from '../../shared/domain/ownership.js';
import type { Harness } from './harness.js';
import { assertIdentityClean, nodeOf, POOL1, POOL2, startHarness } from './harness.js';

const CHROMIUM = '/usr/bin/chromium';
const OUTPUT = resolve('test-output');
const inCi = process.env['CI'] === 'true';
const skip =
  !existsSync(CHROMIUM) && !inCi
    ? `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) to run the status page browser test`
    : false;
if (skip !== false) console.log(`# skipping the status page browser test: ${skip}`);

/** The text of every element `selector` matches, whitespace collapsed (evaluated in the page). */
async function texts(page: Page, selector: string): Promise<string[]> {
  return (await page.evaluate(
    `[...document.querySelectorAll(${JSON.stringify(selector)})].map((node) => (node.textContent ?? '').replace(/\\s+/g, ' ').trim())`,
  )) as string[];
}

/** A number per matching element, from an expression over `node` (evaluated in the page). */
async function measure(page: Page, selector: string, expression: string): Promise<number[]> {
  return (await page.evaluate(
    `[...document.querySelectorAll(${JSON.stringify(selector)})].map((node) => ${expression})`,
  )) as number[];
}

/** No horizontal scroll: the document is no wider than the viewport. */
async function overflow(page: Page): Promise<number> {
  return (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
}

void describe('status page in a real browser', { skip }, () => {
  let harness: Harness;
  let browser: Browser | undefined;
  let userData: string;
  let first: PoolRefreshResult;
  let second: PoolRefreshResult;
  let status: StatusResult;
  let server: { url: string; close(): Promise<void> } | undefined;
  let served = 0;

  before(async () => {
    harness = await startHarness({ clock: 'manual' });
    // Two real refreshes of one pool (the second from a named donor), so the page has a history.
    const one = await harness.run(
      ORCHESTRATION.refreshPool,
      { cluster: 'prod', pool: POOL1, trigger: 'test' },
      'page-1',
    );
    assert.equal(one.runtimeStatus, 'Completed', JSON.stringify(one.failure));
    first = one.output as PoolRefreshResult;
    const two = await harness.run(
      ORCHESTRATION.refreshPool,
      { cluster: 'prod', pool: POOL1, trigger: 'test', node: nodeOf(POOL1, 2) },
      'page-2',
    );
    assert.equal(two.runtimeStatus, 'Completed', JSON.stringify(two.failure));
    second = two.output as PoolRefreshResult;
    const read = async (): Promise<StatusResult> => {
      const run = await harness.run(
        ORCHESTRATION.clusterStatus,
        { cluster: 'prod' },
        `page-status-${served++}`,
      );
      assert.equal(run.runtimeStatus, 'Completed', JSON.stringify(run.failure));
      const read = run.output as ClusterStatusRead;
      return { kind: 'status', clusters: [{ cluster: 'prod', ...read }] };
    };
    status = await read();
    if (process.env['STATUS_PAGE_DUMP'] === '1') console.log(JSON.stringify(status, null, 1));
    server = await serveStatusPage(
      0,
      async () => statusPageOf(await read(), new Date(harness.sim.clock.now())),
      () => undefined,
    );
    userData = await mkdtemp(join(tmpdir(), 'vmssp-chromium-'));
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir: userData,
      args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--font-render-hinting=none'],
    });
    await mkdir(OUTPUT, { recursive: true });
  });

  after(async () => {
    try {
      await browser?.close();
    } finally {
      await server?.close();
      await harness.stop();
      if (userData !== undefined) await rm(userData, { recursive: true, force: true });
    }
  });

  void it('shows the pools, the versions both refreshes built and the timeline of their runs', async () => {
    assert.ok(browser && server);
    assert.equal(first.outcome, 'refreshed', first.reason);
    assert.equal(second.outcome, 'refreshed', second.reason);
    assertIdentityClean(harness, 'the canaries of both refreshes');
    const page = await browser.newPage();
    try {
      const violations: string[] = [];
      page.on('console', (message) => {
        if (/content security policy/i.test(message.text())) violations.push(message.text());
      });
      await page.setViewport({ width: 1280, height: 900 });
      const response = await page.goto(server.url, { waitUntil: 'load' });
      assert.equal(response?.status(), 200);
      assert.equal(response.headers()['content-type'], 'text/html; charset=utf-8');
      assert.equal(response.headers()['content-security-policy'], STATUS_PAGE_CSP);

      const text = (await page.evaluate('document.body.innerText')) as string;
      const pools = status.clusters[0]?.pools ?? [];
      assert.ok(pools.length >= 2, 'the sample cluster has several pools');
      // Each pool has its section, or (refused or skipped, nothing of ours) a line at the end with its reason.
      const headings = await texts(page, 'section.pool h3');
      const collapsed = await texts(page, 'details.not-refreshed li');
      for (const pool of pools) {
        assert.ok(
          headings.some((heading) => heading.includes(`Pool ${pool.pool}`)) ||
            collapsed.some((line) => line.startsWith(pool.pool)),
          `a section or a line for pool ${pool.pool}`,
        );
      }
      assert.ok(collapsed.length >= 3, `the refused pools are collapsed: ${collapsed.join(' | ')}`);
      const firstVersion = first.version?.versionName ?? '';
      const secondVersion = second.version?.versionName ?? '';
      assert.ok(text.includes(firstVersion) && text.includes(secondVersion), 'both versions are listed');
      const refreshed = pools.find((pool) => pool.pool === POOL1);
      assert.equal(refreshed?.currentVersion?.name, secondVersion, 'the second version is current');
      const current = await texts(page, 'section.pool dl.facts dd strong');
      assert.ok(current.includes(secondVersion), 'the current version stands out in the summary');

      // The timeline: both runs, each with its capture step and a duration in words.
      const runs = (await texts(page, 'table caption')).filter((caption) => caption === 'Last runs').length;
      assert.equal(runs, 1, 'one pool has runs');
      const steps = await texts(page, 'ol.timeline li');
      assert.ok(
        steps.filter((step) => step.startsWith('capture: cordon, drain, snapshot the donor')).length >= 2,
        `a capture step per run: ${steps.join(' | ')}`,
      );
      // Each version records its publication: the runs' roll-outs are steps of their own.
      assert.ok(
        steps.filter((step) => step.startsWith('roll out: model')).length >= 1,
        `a roll-out step: ${steps.join(' | ')}`,
      );
      assert.ok(
        steps.every((step) => /: \d+[dhms]|end not recorded|ended by|running/.test(step)),
        'every step says how long',
      );
      const bars = await measure(page, 'ol.timeline .bar', 'node.getBoundingClientRect().width');
      assert.ok(
        bars.length >= 2 && bars.every((width) => width > 0),
        `the steps are drawn: ${bars.join(', ')} ${violations.join(' | ')}`,
      );
      const chart = (await page.evaluate(
        `[...document.querySelectorAll('figure.chart svg[role="img"]')].map((node) => node.getAttribute('aria-label') ?? '')`,
      )) as string[];
      assert.ok(
        chart.some((label) => label.includes(`pool ${POOL1}`)),
        'a freshness chart for the refreshed pool',
      );
      const generations = (await texts(page, 'caption')).filter(
        (caption) => caption === 'Node generations',
      ).length;
      assert.ok(generations >= 1, 'node generations are listed');
      assert.ok(text.includes('No canary is running.'), 'empty states say so');

      // The convergence chart: the runs' readings from the pool lease, the nodes now, in bands and words.
      const convergence = refreshed?.convergence;
      assert.ok(
        convergence !== undefined && convergence.samples.length >= 1,
        `each refresh recorded a reading on the pool lease: ${JSON.stringify(convergence?.samples)}`,
      );
      const figure = `section[aria-labelledby="pool-0-${pools.indexOf(refreshed)}"] figure.chart.convergence`;
      const titles = await texts(page, `${figure} svg > title`);
      const title = titles.find((candidate) => candidate.startsWith(`pool ${POOL1}:`)) ?? '';
      assert.match(title, /nodes per generation over time; now .+: \d+ nodes?/);
      const bands = await measure(
        page,
        `${figure} polygon.band`,
        'node.getBoundingClientRect().width * node.getBoundingClientRect().height',
      );
      assert.ok(bands.length >= 1 && bands.every((area) => area > 0), `bands are drawn: ${bands.join(', ')}`);
      const legend = await texts(page, `${figure} .legend li`);
      const counted = legend.reduce((sum, item) => sum + Number(/: (\d+) nodes?/.exec(item)?.[1] ?? 0), 0);
      assert.equal(
        counted,
        refreshed?.nodes.length,
        `the legend says the pool's nodes in words: ${legend.join(' | ')}`,
      );
      assert.ok(
        legend.some((item) => item.startsWith(`${secondVersion} (new nodes get it):`)),
        `the generation new nodes get is in the legend: ${legend.join(' | ')}`,
      );
      const retirement = await texts(page, 'section.pool p.retirement');
      assert.ok(retirement.includes('retirement: off'), retirement.join(' | '));
      assert.deepEqual(violations, [], 'nothing on the page breaks its CSP');

      await page.screenshot({ path: join(OUTPUT, 'status-page.png'), fullPage: true });
      await writeFile(join(OUTPUT, 'status-page.html'), await page.content(), 'utf8');
      const pictured = await page.$(figure);
      await pictured?.screenshot({ path: join(OUTPUT, 'status-page-convergence.png') });
    } finally {
      await page.close();
    }
  });

  void it('fits a 375 px phone screen without horizontal scrolling', async () => {
    assert.ok(browser && server);
    const page = await browser.newPage();
    try {
      await page.setViewport({ width: 375, height: 800, isMobile: true, hasTouch: true });
      await page.goto(server.url, { waitUntil: 'load' });
      assert.equal(await overflow(page), 0, 'no horizontal overflow at 375 px');
      const labels = (await page.evaluate(
        `[...document.querySelectorAll('td[data-label]')].slice(0, 3).map((cell) => getComputedStyle(cell, '::before').content)`,
      )) as string[];
      assert.ok(
        labels.every((label) => label !== 'none' && label !== ''),
        'cells carry their column name',
      );
      await page.screenshot({ path: join(OUTPUT, 'status-page-375.png'), fullPage: true });
    } finally {
      await page.close();
    }
  });

  void it('shows hostile names and reasons as text, never as markup', async () => {
    assert.ok(browser);
    const pool = status.clusters[0]?.pools.find((candidate) => candidate.pool === POOL1);
    assert.ok(pool);
    const evil = '<script>document.title="pwned"</script><img src=x onerror=alert(1)>';
    const hostile: PoolStatus = {
      ...pool,
      eligible: false,
      refusal: evil,
      nodes: [{ name: evil, generation: evil, ready: true, cordoned: false, olderGeneration: false }],
      convergence: {
        ...pool.convergence,
        samples: [{ at: pool.convergence.now.at, counts: { [evil]: 2 } }],
        now: { at: pool.convergence.now.at, counts: { [evil]: 1 } },
      },
    };
    const page = await browser.newPage();
    try {
      await page.setJavaScriptEnabled(true);
      await page.setContent(
        renderStatusPage({
          generatedAt: new Date(harness.sim.clock.now()).toISOString(),
          clusters: [{ cluster: 'prod', pools: [hostile] }],
        }),
        { waitUntil: 'load' },
      );
      assert.equal(await page.title(), 'vmss-prototype status');
      assert.equal((await measure(page, 'script, img', '1')).length, 0, 'no element came from the text');
      const text = (await page.evaluate('document.body.innerText')) as string;
      assert.ok(text.includes(evil), 'the text is shown as written');
    } finally {
      await page.close();
    }
  });

  void it('agrees with plan and status --json after a rollback and a killed run, at 1280 and 375 px', async () => {
    assert.ok(browser && server);
    // The second version is rejected and rolled back from; a run on pool 2 holds a cordoned node and
    // then dies (its process killed: it never renews its lease, which expires).
    const rollback = await harness.run(
      ORCHESTRATION.rollbackPool,
      { cluster: 'prod', pool: POOL1, trigger: 'test' },
      'page-rollback',
    );
    assert.equal(rollback.runtimeStatus, 'Completed', JSON.stringify(rollback.failure));
    const handle = await harness.composition.dependencies.cluster('prod');
    const scope = await poolScope(handle, POOL2);
    const now = (): Date => new Date(harness.sim.clock.now());
    const acquired = await acquirePoolLease(
      handle.kube,
      scope.lease,
      {
        runId: 'killed-run',
        runner: { kind: 'cli', host: 'laptop-7' },
        purpose: { cluster: 'prod', pool: POOL2, instanceId: 'killed-instance', purpose: 'refresh' },
      },
      now(),
    );
    assert.equal(acquired.kind, 'acquired');
    const heldNode = nodeOf(POOL2, 1);
    await protectNode(handle.kube, heldNode, 'killed-run', await readNodePriorState(handle.kube, heldNode));
    harness.sim.running.world.clock.advanceBy(LEASE_DURATION_SECONDS + 60);

    const statusRun = await harness.run(
      ORCHESTRATION.clusterStatus,
      { cluster: 'prod' },
      'page-status-after',
    );
    assert.equal(statusRun.runtimeStatus, 'Completed', JSON.stringify(statusRun.failure));
    // What `status --json` prints: the statuses as JSON.
    const json = (JSON.parse(JSON.stringify(statusRun.output)) as ClusterStatusRead).pools;
    const planRun = await harness.run(
      ORCHESTRATION.refreshCluster,
      { cluster: 'prod', trigger: 'test', dryRun: true },
      'page-plan',
    );
    assert.equal(planRun.runtimeStatus, 'Completed', JSON.stringify(planRun.failure));
    const plan = planRun.output as ClusterRefreshResult;
    const ELIGIBILITY: Readonly<Record<string, EligibilityState>> = {
      planned: 'refreshable',
      'up-to-date': 'up-to-date',
      skipped: 'skipped',
      refused: 'refused',
    };
    for (const planned of plan.pools) {
      const status = json.find((pool) => pool.pool === planned.pool);
      assert.ok(status, `status has pool ${planned.pool}`);
      const view = poolViewOf(status);
      assert.equal(
        status.plan?.outcome,
        planned.outcome,
        `status --json says what plan says of ${planned.pool}`,
      );
      assert.equal(view.eligibility.state, ELIGIBILITY[planned.outcome], `the page too, for ${planned.pool}`);
    }
    const master = json.find((pool) => pool.pool.includes('master'));
    assert.ok(master, 'the sample cluster has a control-plane pool');
    assert.equal(master.eligible, true, 'its scale set itself is eligible');
    assert.equal(
      poolViewOf(master).eligibility.state,
      'skipped',
      'but plan skips its nodes, and the page says so',
    );

    // The killed run: interrupted everywhere, its node left behind.
    const two = json.find((pool) => pool.pool === POOL2);
    assert.ok(two);
    assert.equal(two.run.kind, 'interrupted');
    const twoView = poolViewOf(two);
    assert.equal(twoView.run.state, 'interrupted');
    assert.deepEqual(
      two.ownership?.heldNodes.map((node) => node.node),
      [heldNode],
    );
    assert.deepEqual(
      twoView.heldNodes.map((node) => [node.node, node.state]),
      [[heldNode, 'left behind']],
    );
    assert.ok(
      two.history.runs.every((run) => run.outcome !== 'running'),
      'no run of pool 2 is running',
    );

    // The rejected version: its nodes are "rejected v…" in status --json and on the page.
    const one = json.find((pool) => pool.pool === POOL1);
    assert.ok(one);
    const secondVersion = second.version?.versionName ?? '';
    const rejectedNodes = one.nodes.filter((node) => node.generation === secondVersion);
    assert.ok(rejectedNodes.length >= 1, `a node of ${secondVersion}: ${JSON.stringify(one.nodes)}`);
    assert.ok(rejectedNodes.every((node) => node.generationState === 'rejected'));
    const oneView = poolViewOf(one);
    assert.ok(
      oneView.nodes
        .filter((node) => node.generation === secondVersion)
        .every((node) => node.label === `rejected v${secondVersion}`),
    );
    // Both runs show when they ended: the rejected one at its rejection, the first by the second's start.
    assert.ok(
      one.history.runs.every((run) => run.endedAt !== undefined || run.endedBy !== undefined),
      JSON.stringify(one.history.runs),
    );

    const page = await browser.newPage();
    try {
      await page.setViewport({ width: 1280, height: 900 });
      await page.goto(server.url, { waitUntil: 'load' });
      const glance = await texts(page, '.glance tbody tr');
      const row = glance.find((text) => text.startsWith(POOL2)) ?? '';
      assert.match(row, /interrupted, left behind killed-run/, row);
      assert.ok(row.includes(`vmss-prototype release --pool ${POOL2}`), `the way out: ${row}`);
      assert.ok(row.includes(heldNode) && row.includes('left behind'), `the held node at a glance: ${row}`);
      assert.ok(
        !glance.some((text) => text.startsWith(master.pool)),
        'the control-plane pool is not in the glance table',
      );
      const collapsed = await texts(page, 'details.not-refreshed li');
      assert.ok(
        collapsed.some((text) => text.startsWith(master.pool) && text.includes('skipped by plan')),
        `collapsed with its reason: ${collapsed.join(' | ')}`,
      );
      const open = (await page.evaluate(`document.querySelector('details.not-refreshed').open`)) as boolean;
      assert.equal(open, false, 'refused pools are collapsed');
      const text = (await page.evaluate('document.body.innerText')) as string;
      assert.ok(!text.includes('running now'), 'nothing is running');
      assert.ok(text.includes(`rejected v${secondVersion}`), 'the rejected generation is named');
      const legend = await texts(page, '.freshness-legend li');
      assert.ok(
        legend.some((item) => item.includes('donor patched')),
        legend.join(' | '),
      );
      await page.screenshot({ path: join(OUTPUT, 'status-page-1280.png'), fullPage: true });
      await page.setViewport({ width: 375, height: 800, isMobile: true, hasTouch: true });
      await page.goto(server.url, { waitUntil: 'load' });
      assert.equal(await overflow(page), 0, 'no horizontal overflow at 375 px');
      const rows = await measure(page, '.glance tbody tr', 'node.getBoundingClientRect().width');
      assert.ok(
        rows.length >= 2 && rows.every((width) => width > 300 && width <= 375),
        `rows fit: ${rows.join(', ')}`,
      );
      await page.screenshot({ path: join(OUTPUT, 'status-page-375-operator.png'), fullPage: true });
      await page.screenshot({ path: join(OUTPUT, 'status-page-375-glance.png') });
      await writeFile(join(OUTPUT, 'status-page-operator.html'), await page.content(), 'utf8');
    } finally {
      await page.close();
    }
  });
});
