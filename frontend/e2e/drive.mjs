// Drives Debian's headless Chromium through TensorBoard's real page into the Advisor tab's iframe.
//
//   node e2e/drive.mjs SPEC.json
//
// SPEC: {"url": page to open (TensorBoard's root, or a notebook page embedding it),
//        "screenshots": folder for PNGs, "viewport": [w, h], "colorScheme": "light"|"dark",
//        "chromium": executable (default /usr/bin/chromium), "timeoutMs": per step (default 90000),
//        "allowedOrigins": [origins the page may contact; anything else fails the run (offline)],
//        "steps": [{"do": <action>, ...args}]}
// Actions are listed in ACTIONS below. The run stops at the first failed step, prints
// "FAILED step N (<action>): <why>" to stderr and exits 1; on success it prints a JSON summary.
// Always fails when the page opened a dialog (alert/confirm/prompt) or the Advisor threw.

import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-default-apps",
  "--disable-extensions",
  "--no-default-browser-check",
];

class StepError extends Error {}

function fail(msg) {
  throw new StepError(msg);
}

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const timeout = spec.timeoutMs ?? 90000;
const shotsDir = spec.screenshots;
if (shotsDir) mkdirSync(shotsDir, { recursive: true });

const dialogs = [];
const advisorErrors = [];
const foreignRequests = [];
const summary = { steps: [], screenshots: [], requests: 0 };

/** The frame running TensorBoard's app (the page itself, or an iframe in a notebook page). */
async function tensorboardFrame(page) {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    for (const f of page.frames()) {
      try {
        if (await f.evaluate(() => !!document.querySelector("tb-webapp"))) return f;
      } catch {
        // frame navigating or detached: look again
      }
    }
    await page.waitForTimeout(250);
  }
  fail(`no TensorBoard app (tb-webapp) in any frame of ${page.url()} within ${timeout} ms`);
}

/** The Advisor's iframe (plugin_entry.html?name=advisor) once its app has rendered. */
async function advisorFrame(page) {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    const f = page.frames().find((fr) => fr.url().includes("plugin_entry.html?name=advisor"));
    if (f) {
      try {
        if (await f.evaluate(() => !!document.querySelector('[data-testid="advisor"]'))) return f;
      } catch {
        // still loading
      }
    }
    await page.waitForTimeout(250);
  }
  fail("the Advisor iframe (plugin_entry.html?name=advisor) did not render [data-testid=advisor]");
}

const sel = (testid) => `[data-testid="${testid}"]`;

async function textOf(frame, selector) {
  const loc = frame.locator(selector).first();
  await loc.waitFor({ state: "attached", timeout });
  return ((await loc.textContent()) ?? "").trim();
}

/** Wait until the panel shows `ready` (a selector) or an error; fail with the error's text. */
async function waitForPanel(frame, panel, ready) {
  const handle = await frame.waitForFunction(
    ([panelSel, readySel]) => {
      const p = document.querySelector(panelSel);
      if (!p) return null;
      if (p.querySelector(readySel)) return { ok: true };
      const err = p.querySelector('[data-testid="error"]');
      return err ? { ok: false, error: err.textContent } : null;
    },
    [sel(`panel-${panel}`), ready],
    { timeout, polling: 200 },
  );
  const res = await handle.jsonValue();
  if (!res.ok) fail(`the ${panel} panel shows an error: ${res.error}`);
}

function cssString(s) {
  return JSON.stringify(s);
}

function regex(step) {
  return new RegExp(step.match, step.flags ?? "");
}

async function themeState(ctx, mode) {
  await ctx.adv.waitForFunction((t) => document.documentElement.dataset.theme === t, mode, { timeout: 15000 });
  const background = await ctx.adv.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const tensorboardDarkMode = await ctx.tb.evaluate(() => document.body.classList.contains("dark-mode"));
  return { theme: mode, background, tensorboardDarkMode };
}

const ACTIONS = {
  /** Test the page itself (an HTML export opened from a file), not TensorBoard: wait for its charts. */
  async openPage(ctx) {
    ctx.adv = ctx.page.mainFrame();
    const state = await ctx.adv.waitForFunction(
      () => document.documentElement.dataset.chartsDrawn ?? document.documentElement.dataset.chartsError,
      null,
      { timeout },
    );
    const error = await ctx.adv.evaluate(() => document.documentElement.dataset.chartsError ?? null);
    if (error) fail(`the export's charts failed: ${error}`);
    return { url: ctx.page.url(), chartsDrawn: Number(await state.jsonValue()) };
  },

  /** Click TensorBoard's "Advisor" tab and wait for the plugin's iframe to render. */
  async openAdvisor(ctx, s) {
    const tb = await tensorboardFrame(ctx.page);
    if (!s.viaUrl) {
      const tab = tb.getByRole("tab", { name: /^advisor$/i });
      await tab.waitFor({ timeout });
      await tab.click();
    }
    ctx.adv = await advisorFrame(ctx.page);
    ctx.tb = tb;
    return { tensorboard: tb.url(), advisor: ctx.adv.url() };
  },

  /**
   * Pick a run (and host) in the Report panel and wait for its report. With `expectError` (a
   * regex) the panel must show that error instead; with `expectPending` the loading line must
   * have said the analysis is still running (the server answered 202 and the tab polled).
   */
  async selectRun(ctx, s) {
    const f = ctx.adv;
    await f.locator(sel("nav-report")).click();
    await f.evaluate(() => {
      window.__advisorSawPending = false;
      window.__advisorProgress = null;
      const status = document.querySelector('[data-testid="report-state"]');
      new MutationObserver(() => {
        if (/still running/.test(status.textContent)) window.__advisorSawPending = true;
        const bar = status.querySelector('[data-testid="progress"]');
        if (bar && !window.__advisorProgress) {
          window.__advisorProgress = { stage: bar.getAttribute("data-stage"), text: bar.textContent, hasBar: !!bar.querySelector("progress") };
        }
      }).observe(status, { childList: true, subtree: true, characterData: true });
    });
    const runSel = f.locator(sel("run-select"));
    const values = await runSel.evaluate((el) => [...el.options].map((o) => o.value));
    if (!values.includes(s.run)) fail(`run ${cssString(s.run)} is not in the run selector: ${JSON.stringify(values)}`);
    if ((await runSel.inputValue()) !== s.run) await runSel.selectOption(s.run);
    const host = s.host ?? "";
    if ((await f.locator(sel("host-select")).inputValue()) !== host) await f.locator(sel("host-select")).selectOption(host);
    if (s.expectError) {
      const err = f.locator(`${sel("panel-report")} ${sel("error")}`);
      await err.waitFor({ state: "visible", timeout });
      const text = ((await err.textContent()) ?? "").trim();
      if (!new RegExp(s.expectError).test(text)) fail(`error ${cssString(text)} does not match /${s.expectError}/`);
      const leftover = await f.locator(`${sel("panel-report")} ${sel("report")}`).count();
      if (leftover) fail("an old report is still shown under the error");
      return { run: s.run, host, error: text };
    }
    await waitForPanel(f, "report", `[data-testid="report"][data-run=${cssString(s.run)}][data-host=${cssString(host)}]`);
    const pending = await f.evaluate(() => window.__advisorSawPending);
    if (s.expectPending && !pending) fail("the tab never showed that the analysis was still running");
    const progress = await f.evaluate(() => window.__advisorProgress);
    if (s.expectProgress && !(progress && progress.hasBar && progress.stage)) fail(`no progress bar while running: ${JSON.stringify(progress)}`);
    return { run: s.run, host, sawPending: pending, progress };
  },

  /** The panel shows the "nothing found" message (no runs in the logdir). */
  async expectEmpty(ctx, s) {
    const empty = ctx.adv.locator(`${sel("panel-report")} ${sel("empty")}`);
    await empty.waitFor({ state: "visible", timeout });
    const text = ((await empty.textContent()) ?? "").trim();
    if (s.match && !new RegExp(s.match).test(text)) fail(`empty message ${cssString(text)} does not match /${s.match}/`);
    return { text };
  },

  /** Text of the first element with data-testid must match a regex. */
  async expectText(ctx, s) {
    const text = await textOf(ctx.adv, s.selector ?? sel(s.testid));
    if (!regex(s).test(text)) fail(`${s.selector ?? s.testid} text ${cssString(text)} does not match /${s.match}/`);
    return { text };
  },

  /** Text of the first element must equal a string exactly. */
  async expectExactText(ctx, s) {
    const text = await textOf(ctx.adv, s.selector ?? sel(s.testid));
    if (text !== s.text) fail(`${s.selector ?? s.testid} text is ${cssString(text)}, expected ${cssString(s.text)}`);
    return { text };
  },

  /** How many elements match a selector: at least `min` (default 1). */
  async expectCount(ctx, s) {
    const n = await ctx.adv.locator(s.selector).count();
    if (n < (s.min ?? 1) || (s.max !== undefined && n > s.max)) fail(`${s.selector}: ${n} elements, expected ${s.min ?? 1}..${s.max ?? "∞"}`);
    return { count: n };
  },

  /** A Chart.js canvas drawn with visible pixels in several colours. */
  async expectChart(ctx, s) {
    const canvas = ctx.adv.locator(sel(s.testid)).first();
    await canvas.waitFor({ state: "visible", timeout });
    const stats = await canvas.evaluate((c) => {
      const g = c.getContext("2d");
      const { data } = g.getImageData(0, 0, c.width, c.height);
      let painted = 0;
      const colours = new Set();
      for (let i = 0; i < data.length; i += 4) {
        if (data[i + 3] > 0) {
          painted++;
          if (colours.size < 64) colours.add(`${data[i] >> 4},${data[i + 1] >> 4},${data[i + 2] >> 4}`);
        }
      }
      return { width: c.width, height: c.height, painted, colours: colours.size, points: Number(c.getAttribute("data-chart-ready") || 0) };
    });
    if (stats.points < 1) fail(`${s.testid}: the chart has no data points (data-chart-ready=${stats.points})`);
    if (stats.width < 100 || stats.height < 50) fail(`${s.testid}: canvas is only ${stats.width}x${stats.height}`);
    if (stats.painted < (s.minPixels ?? 500)) fail(`${s.testid}: only ${stats.painted} painted pixels`);
    if (stats.colours < (s.minColours ?? 2)) fail(`${s.testid}: only ${stats.colours} colours drawn`);
    return stats;
  },

  /** A recommendation card with this id is shown. */
  async expectRecommendation(ctx, s) {
    const card = ctx.adv.locator(`[data-testid="rec-card"][data-rec-id=${cssString(s.id)}]`);
    await card.first().waitFor({ state: "visible", timeout });
    const title = ((await card.first().locator("h3").textContent()) ?? "").trim();
    if (s.title && title !== s.title) fail(`recommendation ${s.id} title ${cssString(title)} != ${cssString(s.title)}`);
    return { id: s.id, title };
  },

  /** Click the first copy button of a recommendation; the clipboard must then hold the snippet. */
  async copySnippet(ctx, s) {
    const card = ctx.adv.locator(`[data-testid="rec-card"][data-rec-id=${cssString(s.id)}]`).first();
    const block = card.locator(sel("snippet-tf")).first();
    // A recommendation below the first folds its code: open it as a person would, by its summary line.
    const fold = card.locator(sel("snippet-fold"));
    if ((await fold.count()) && !(await fold.first().evaluate((d) => d.open))) await fold.first().locator("summary").click();
    const code = ((await block.locator("pre").textContent()) ?? "").trim();
    const button = block.locator(sel("copy-snippet"));
    await button.click();
    await ctx.adv.waitForFunction(
      (el) => el.textContent === "Copied" || el.textContent === "Copy failed",
      await button.elementHandle(),
      { timeout: 10000 },
    );
    const label = await button.textContent();
    if (label !== "Copied") fail(`copy button says ${cssString(label)}`);
    const clip = (await ctx.page.evaluate(() => navigator.clipboard.readText())).trim();
    if (clip !== code) fail(`clipboard holds ${cssString(clip)}, the snippet is ${cssString(code)}`);
    return { copied: clip.length };
  },

  /** Compare two runs in the diff panel. */
  async diff(ctx, s) {
    const f = ctx.adv;
    await f.locator(sel("nav-diff")).click();
    await f.locator(sel("diff-baseline")).selectOption(s.baseline);
    await f.locator(sel("diff-candidate")).selectOption(s.candidate);
    await f.locator(sel("diff-compare")).click();
    await waitForPanel(
      f,
      "diff",
      `[data-testid="diff"][data-baseline=${cssString(s.baseline)}][data-candidate=${cssString(s.candidate)}]`,
    );
    return { baseline: s.baseline, candidate: s.candidate };
  },

  /** The diff op table is ordered by absolute change, largest first, and has at least `min` rows. */
  async expectSortedDeltas(ctx, s) {
    const deltas = await ctx.adv
      .locator(`${sel(s.testid ?? "diff-ops")} [data-delta]`)
      .evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-delta"))));
    if (deltas.length < (s.min ?? 1)) fail(`only ${deltas.length} rows in the op table`);
    for (let i = 1; i < deltas.length; i++) {
      if (Math.abs(deltas[i]) > Math.abs(deltas[i - 1]) + 1e-9) fail(`row ${i} (|${deltas[i]}|) is larger than row ${i - 1} (|${deltas[i - 1]}|)`);
    }
    return { rows: deltas.length, first: deltas[0] };
  },

  /** Type into an input (e.g. a table's filter box), replacing what it held. */
  async fill(ctx, s) {
    const text = s.text ?? s.value;
    await ctx.adv.locator(s.selector ?? sel(s.testid)).first().fill(text);
    return { testid: s.testid, text, value: text };
  },

  /** Choose an option of a <select> by its value. */
  async choose(ctx, s) {
    await ctx.adv.locator(s.selector ?? sel(s.testid)).first().selectOption(s.value);
    return { testid: s.testid, value: s.value };
  },

  /** Click one of the tab's navigation buttons (report, diff, doctor). */
  async clickNav(ctx, s) {
    await ctx.adv.locator(sel(`nav-${s.panel}`)).click();
    return { panel: s.panel };
  },

  /** Reload TensorBoard's whole page (not just the iframe) and wait for the Advisor to render again. */
  async reloadPage(ctx) {
    await ctx.page.reload({ waitUntil: "load", timeout });
    ctx.tb = await tensorboardFrame(ctx.page);
    ctx.adv = await advisorFrame(ctx.page);
    return { tensorboard: ctx.tb.url(), advisor: ctx.adv.url() };
  },

  /** The diff panel is visible and shows this pair (after a reload or an automatic compare). */
  async expectDiffShown(ctx, s) {
    await waitForPanel(
      ctx.adv,
      "diff",
      `[data-testid="diff"][data-baseline=${cssString(s.baseline)}][data-candidate=${cssString(s.candidate)}]`,
    );
    const hidden = await ctx.adv.locator(sel("panel-diff")).evaluate((el) => el.hidden);
    if (hidden) fail("the diff panel is hidden");
    const pair = [await ctx.adv.locator(sel("diff-baseline")).inputValue(), await ctx.adv.locator(sel("diff-candidate")).inputValue()];
    if (pair[0] !== s.baseline || pair[1] !== s.candidate) fail(`selectors show ${JSON.stringify(pair)}`);
    return { baseline: s.baseline, candidate: s.candidate, hash: new URL(ctx.adv.url()).hash };
  },

  /**
   * Open the Trend view (typing `pattern` when given; with `shown`, it must already be open, e.g.
   * after a reload) and wait for its answer; returns each capture row's run and whether it starts
   * a change, and the change points the chart marks.
   */
  async trend(ctx, s) {
    const f = ctx.adv;
    if (s.shown) {
      if (await f.locator(sel("panel-trend")).evaluate((el) => el.hidden)) fail("the trend panel is hidden");
    } else {
      await f.locator(sel("nav-trend")).click();
    }
    if (s.pattern !== undefined) {
      await f.locator(sel("trend-pattern")).fill(s.pattern);
      await f.locator(sel("trend-show")).click();
    }
    const pattern = s.pattern ?? (await f.locator(sel("trend-pattern")).inputValue());
    await waitForPanel(f, "trend", `[data-testid="trend"][data-run=${cssString(pattern)}]`);
    const rows = await f.locator(`${sel("panel-trend")} ${sel("trend-capture")}`).evaluateAll((els) =>
      els.map((e) => ({ index: Number(e.getAttribute("data-index")), run: e.getAttribute("data-run"), change: e.getAttribute("data-change") === "true" })),
    );
    const marked = await f.locator(`${sel("panel-trend")} ${sel("chart-trend")}`).first().getAttribute("data-change-points");
    return { pattern, rows, chartChangePoints: (marked ?? "").split(" ").filter(Boolean).map(Number) };
  },

  /** The Report panel is visible and shows this run (after a click elsewhere switched to it). */
  async expectReportShown(ctx, s) {
    const host = s.host ?? "";
    await waitForPanel(ctx.adv, "report", `[data-testid="report"][data-run=${cssString(s.run)}][data-host=${cssString(host)}]`);
    const hidden = await ctx.adv.locator(sel("panel-report")).evaluate((el) => el.hidden);
    if (hidden) fail("the report panel is hidden");
    const selected = await ctx.adv.locator(sel("run-select")).inputValue();
    if (selected !== s.run) fail(`the run selector shows ${cssString(selected)}`);
    return { run: s.run, hash: new URL(ctx.adv.url()).hash };
  },

  async doctor(ctx) {
    await ctx.adv.locator(sel("nav-doctor")).click();
    await waitForPanel(ctx.adv, "doctor", sel("doctor-status"));
    return { status: await textOf(ctx.adv, sel("doctor-status")) };
  },

  /** Use TensorBoard's own light/dark menu in its header; the tab must follow its body.dark-mode. */
  async tensorboardTheme(ctx, s) {
    const titles = { dark: "Force dark TensorBoard theme.", light: "Force light TensorBoard theme." };
    await ctx.tb.locator('button[aria-label="Menu for changing light or dark theme"]').click();
    await ctx.tb.locator(`button[title=${cssString(titles[s.mode])}]`).click();
    return await themeState(ctx, s.mode);
  },

  /** The tab shows this theme (e.g. when TensorBoard started in the browser's dark scheme). */
  async expectTheme(ctx, s) {
    return await themeState(ctx, s.mode);
  },

  /** The run name is shown as literal text and nothing from it became markup. */
  async expectLiteralRun(ctx, s) {
    const found = await ctx.adv.evaluate((run) => {
      const opts = [...document.querySelectorAll('[data-testid="run-select"] option')].map((o) => o.textContent);
      const shown = document.querySelector('[data-testid="report-run"] .adv-name')?.textContent ?? null;
      return {
        inSelect: opts.some((o) => o === run || o.startsWith(`${run} · `)),
        shown,
        imgs: document.querySelectorAll("img").length,
        handlers: [...document.querySelectorAll("*")].filter((e) => [...e.attributes].some((a) => a.name.startsWith("on"))).length,
      };
    }, s.run);
    if (!found.inSelect) fail(`no run option with the literal text ${cssString(s.run)}`);
    if (found.shown !== s.run) fail(`report shows run ${cssString(found.shown)}, expected the literal ${cssString(s.run)}`);
    if (found.imgs !== 0) fail(`${found.imgs} <img> elements in the Advisor document`);
    if (found.handlers !== 0) fail(`${found.handlers} elements carry on* attributes`);
    return found;
  },

  /** A "open in Profile tab" link resolves to TensorBoard's page with xprof's run/tag/host and #profile. */
  async expectProfileLink(ctx, s) {
    const link = ctx.adv.locator(sel(`profile-link-${s.tool.replace("@", "")}`)).first();
    const { href, target } = await link.evaluate((a) => ({ href: a.href, target: a.target }));
    const u = new URL(href);
    const tbUrl = new URL(ctx.tb.url());
    const problems = [];
    if (u.origin !== tbUrl.origin || u.pathname !== tbUrl.pathname) problems.push(`points at ${u.origin}${u.pathname}, TensorBoard is at ${tbUrl.origin}${tbUrl.pathname}`);
    if (u.searchParams.get("run") !== s.run) problems.push(`run=${u.searchParams.get("run")}`);
    if (u.searchParams.get("tag") !== s.tool) problems.push(`tag=${u.searchParams.get("tag")}`);
    if ((u.searchParams.get("host") ?? undefined) !== s.host) problems.push(`host=${u.searchParams.get("host")}`);
    if (u.hash !== "#profile") problems.push(`hash ${u.hash}`);
    if (target !== "_parent") problems.push(`target ${target}`);
    if (problems.length) fail(`profile link ${href}: ${problems.join("; ")}`);
    if (s.click) {
      await link.click();
      await ctx.tb.waitForURL((url) => url.hash === "#profile" && url.searchParams.get("run") === s.run, { timeout });
    }
    return { href };
  },

  /**
   * The first evidence span of recommendation `id` links to xprof's trace viewer on the span's host
   * at its time: the click opens it, it asks xprof's server for the window around the span, and the
   * answer holds the span's event (name and ts); the Profile tab link beside it lands on the tab's
   * trace viewer of that run and host.
   */
  async expectSpanTraceViewerLink(ctx, s) {
    const card = ctx.adv.locator(`[data-testid="rec-card"][data-rec-id=${cssString(s.id)}]`).first();
    await card.locator("details.adv-spans").evaluateAll((els) => els.forEach((d) => { d.open = true; }));  // as a person opens it
    const item = card.locator(sel("span")).first();
    const ts = Number(await item.getAttribute("data-ts"));
    const link = item.locator(sel("span-trace-viewer"));
    const href = await link.evaluate((a) => a.href);
    const popupOpened = ctx.page.context().waitForEvent("page", { timeout });
    await link.click();
    const viewer = await popupOpened;
    const response = await viewer.waitForResponse(
      (r) => r.url().includes("/data/plugin/profile/data") && new URL(r.url()).searchParams.get("tag") === "trace_viewer@",
      { timeout },
    );
    const asked = new URL(response.url());
    const got = Object.fromEntries(["run", "tag", "host", "start_time_ms", "end_time_ms"]
      .map((k) => [k, asked.searchParams.get(k)]));
    const page = new URL(href);
    got.view_start = page.searchParams.get("view_start");
    got.view_end = page.searchParams.get("view_end");
    const text = await response.text();
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      fail(`the trace viewer's data request ${response.url()} answered ${response.status()}: ${text.slice(0, 300)}`);
    }
    const events = (body.traceEvents ?? []).filter((e) => e.ph === "X");
    const atSpan = events.filter((e) => Math.abs(Number(e.ts) - ts) < 0.0015).map((e) => ({ name: e.name, ts: e.ts, dur: e.dur }));
    await viewer.waitForTimeout(500);
    const viewerShot = shotsDir ? join(shotsDir, "advisor-evidence-trace-viewer.png") : null;
    if (viewerShot) await viewer.screenshot({ path: viewerShot });
    await viewer.close();
    const tabLink = item.locator(sel("span-profile-tab"));
    const tabHref = await tabLink.evaluate((a) => a.href);
    await tabLink.click();
    await ctx.tb.waitForURL((url) => url.hash === "#profile" && url.searchParams.get("run") === s.run, { timeout });
    const frame = await (async () => {
      const deadline = Date.now() + timeout;
      while (Date.now() < deadline) {
        const f = ctx.page.frames().find((x) => x.url().includes("/data/plugin/profile/trace_viewer"));
        if (f) return f.url();
        await ctx.page.waitForTimeout(200);
      }
      return null;
    })();
    if (!frame) fail("the Profile tab did not open its trace viewer");
    return { href, ts, dataRequest: got, events: events.length, atSpan, tabHref, profileFrame: frame };
  },

  /** Point the Perfetto hand-off at `origin` (a local stub page in tests): the tab's localStorage. */
  async setPerfettoOrigin(ctx, s) {
    await ctx.adv.evaluate((o) => window.localStorage.setItem("advisor_perfetto_origin", o), s.origin);
    return {};
  },

  /**
   * Click "Open in Perfetto" on the first span of recommendation `id`: a window opens at the stub's
   * origin with the span in its route, and the stub reports what it was posted (window.__received).
   * With `expectState` the tab's status must reach that state instead (e.g. "unreachable").
   */
  async openSpanInPerfetto(ctx, s) {
    const card = ctx.adv.locator(`[data-testid="rec-card"][data-rec-id=${cssString(s.id)}]`).first();
    await card.locator("details.adv-spans").evaluateAll((els) => els.forEach((d) => { d.open = true; }));  // as a person opens it
    const item = card.locator(sel("span")).first();
    const span = { ts: Number(await item.getAttribute("data-ts")), host: await item.getAttribute("data-host") };
    const popupOpened = ctx.page.context().waitForEvent("page", { timeout });
    await item.locator(sel("span-perfetto")).click();
    const popup = await popupOpened;
    const status = item.locator(sel("span-status"));
    const want = s.expectState ?? "sent";
    await ctx.adv.waitForFunction(
      ([el, state]) => el?.dataset.state === state,
      [await status.elementHandle(), want],
      { timeout: s.waitMs ?? timeout, polling: 100 },
    ).catch(async () => fail(`the hand-off did not reach "${want}": ${await status.textContent()}`));
    const statusText = ((await status.textContent()) ?? "").trim();
    let received = null;
    if (want === "sent") {
      await popup.waitForFunction(() => window.__received !== undefined, null, { timeout });
      received = await popup.evaluate(() => window.__received);
    }
    const popupUrl = popup.url();
    await popup.close();
    return { span, popupUrl, received, statusText };
  },

  /** Click the first element matching a selector or testid. */
  /** The rendered size of the first element matching (the test checks that it fits). */
  async measure(ctx, s) {
    const box = await ctx.adv.locator(s.selector ?? sel(s.testid)).first().boundingBox();
    if (!box) fail(`${s.selector ?? s.testid}: not rendered`);
    return { width: box.width, height: box.height };
  },

  async click(ctx, s) {
    await ctx.adv.locator(s.selector ?? sel(s.testid)).first().click();
    return {};
  },

  /** What a person sees of the tab, for the test to judge: its height (px), the longest run of visible
   * text without a space (innerText leaves out what is not rendered: closed <details>, hidden panels),
   * and each visible table's rows with whether a "Show all" button sits beside it. */
  async pageShape(ctx) {
    return await ctx.adv.evaluate(() => {
      const words = document.body.innerText.split(/\s+/);
      const longest = words.reduce((a, w) => (w.length > a.length ? w : a), "");
      const tables = [...document.querySelectorAll("table")]
        .filter((t) => t.getClientRects().length > 0)
        .map((t) => ({
          testid: t.getAttribute("data-testid") ?? "",
          rows: t.querySelectorAll("tbody tr").length,
          showAll: !!t.parentElement?.querySelector(":scope > .adv-show-all"),
          select: !!t.closest(".adv-card")?.querySelector("select"),
        }));
      const cards = [...document.querySelectorAll(".adv-card")]
        .filter((c) => c.getClientRects().length > 0)
        .map((c) => ({ testid: c.getAttribute("data-testid") ?? "", height: Math.round(c.getBoundingClientRect().height) }));
      const owner = [...document.querySelectorAll("body *")].find(
        (e) => e.children.length === 0 && (e.textContent ?? "").includes(longest))?.closest("[data-testid]")?.getAttribute("data-testid") ?? "";
      return { height: document.documentElement.scrollHeight, longestRun: longest, longestIn: owner, tables, cards };
    });
  },

  /** Text (and one attribute, when `attr` is given) of every element matching: the test checks them. */
  async collect(ctx, s) {
    const items = await ctx.adv.locator(s.selector).evaluateAll(
      (els, attr) => els.map((e) => ({ text: (e.textContent ?? "").trim(), attr: attr ? e.getAttribute(attr) : null })),
      s.attr ?? null,
    );
    if (items.length < (s.min ?? 0)) fail(`${s.selector}: ${items.length} elements, expected at least ${s.min}`);
    return { items };
  },

  async screenshot(ctx, s) {
    if (!shotsDir) fail("no screenshots folder in the spec");
    if (s.scrollTo && ctx.adv) await ctx.adv.locator(s.scrollTo).first().scrollIntoViewIfNeeded();
    if (s.fullAdvisor && ctx.adv) {
      // Grow the viewport until the whole tab fits: TensorBoard sizes the iframe to the window.
      const h = await ctx.adv.evaluate(() => document.documentElement.scrollHeight);
      const vp = ctx.page.viewportSize();
      await ctx.page.setViewportSize({ width: vp.width, height: Math.min(8000, h + 80) });
      await ctx.page.waitForTimeout(300);
      const path = join(shotsDir, `${s.name}.png`);
      await ctx.page.screenshot({ path });
      await ctx.page.setViewportSize(vp);
      summary.screenshots.push(path);
      return { path };
    }
    await ctx.page.waitForTimeout(200);
    const path = join(shotsDir, `${s.name}.png`);
    await ctx.page.screenshot({ path });
    summary.screenshots.push(path);
    return { path };
  },
};

async function main() {
  const browser = await chromium.launch({
    executablePath: spec.chromium ?? "/usr/bin/chromium",
    args: CHROMIUM_ARGS,
    timeout: 60000,
  });
  let failed = null;
  try {
    const [w, h] = spec.viewport ?? [1400, 1000];
    const context = await browser.newContext({
      viewport: { width: w, height: h },
      colorScheme: spec.colorScheme ?? "light",
      permissions: ["clipboard-read", "clipboard-write"],
    });
    const page = await context.newPage();
    page.setDefaultTimeout(timeout);
    const allowed = new Set(spec.allowedOrigins ?? [new URL(spec.url).origin]);
    page.on("dialog", (d) => {
      dialogs.push(`${d.type()}: ${d.message()}`);
      void d.dismiss();
    });
    page.on("pageerror", (e) => {
      if (String(e.stack ?? "").includes("plugin/advisor/")) advisorErrors.push(String(e.stack ?? e.message));
    });
    page.on("request", (r) => {
      summary.requests++;
      const u = r.url();
      if (u.startsWith("data:") || u.startsWith("blob:") || u.startsWith("about:")) return;
      if (!allowed.has(new URL(u).origin)) foreignRequests.push(u);
    });
    const ctx = { page, adv: null, tb: null };
    await page.goto(spec.url, { waitUntil: "load", timeout });
    for (const [i, step] of (spec.steps ?? []).entries()) {
      const action = ACTIONS[step.do];
      if (!action) fail(`unknown action ${step.do}`);
      try {
        const result = await action(ctx, step);
        summary.steps.push({ do: step.do, ...(result ?? {}) });
      } catch (e) {
        const why = e instanceof StepError ? e.message : String(e?.stack ?? e).split("\n").slice(0, 6).join("\n");
        failed = `FAILED step ${i} (${step.do}): ${why}`;
        if (shotsDir) {
          const path = join(shotsDir, `failure-${spec.name ?? "run"}.png`);
          await page.screenshot({ path }).catch(() => {});
          failed += `\n(screenshot of the failure: ${path})`;
        }
        break;
      }
    }
    if (!failed && dialogs.length) failed = `FAILED: the page opened dialogs: ${JSON.stringify(dialogs)}`;
    if (!failed && advisorErrors.length) failed = `FAILED: the Advisor threw: ${advisorErrors[0]}`;
    if (!failed && foreignRequests.length) failed = `FAILED: requests left the allowed origins ${JSON.stringify([...allowed])}: ${foreignRequests.slice(0, 5).join(", ")}`;
  } finally {
    await browser.close();
  }
  summary.dialogs = dialogs;
  console.log(JSON.stringify(summary, null, 1));
  if (failed) {
    console.error(failed);
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(`FAILED: ${e?.stack ?? e}`);
  process.exit(1);
});
