// The tab's shell: navigation, selectors, loading/error states and theme. Data comes from the
// routes in api.ts/urls.ts; every section is drawn by a view module.

import { CANCELLED, getJson, type ApiResult } from "./api";
import type { Chart } from "./charts";
import type { Theme } from "./chartdata";
import { h, option, replace } from "./dom";
import type { Diff, Doctor, Report, RunInfo, RunsResponse, Trend } from "./types";
import { defaultSeries, seriesChoices } from "./trenddata";
import { diffUrl, doctorUrl, frameworkLabel, reportUrl, runsUrl, trendUrl } from "./urls";
import { progressFraction, progressLine, progressParts } from "./progress";
import { readParentDark, resolveTheme } from "./theme";
import { initialDiffPair, pageHashWith, parsePageState, parseState, stateHash, type TabState } from "./urlstate";
import { renderDiff } from "./views/diff";
import { doctorProblemCount, renderDoctor } from "./views/doctor";
import { renderReport } from "./views/report";
import { renderTrend } from "./views/trend";

type Panel = "report" | "diff" | "doctor" | "trend";

/** TensorBoard's page, when the tab may reach it (same origin); null in cross-origin embeddings. */
function tensorboardPage(): Window | null {
  try {
    const p = window.parent;
    if (!p || p === window) return null;
    void p.location.hash; // throws when cross-origin
    return p;
  } catch {
    return null;
  }
}

/** The page's state when it holds ours (it survives reloads), else the iframe's own hash. */
function initialState(): TabState {
  const page = tensorboardPage();
  const fromPage = page ? parsePageState(page.location.hash) : {};
  return Object.keys(fromPage).length ? fromPage : parseState(window.location.hash);
}

/** The iframe's own URL with `hash`: the document's <base> must not turn "#…" into another path. */
function withHash(hash: string): string {
  return window.location.pathname + window.location.search + hash;
}

interface Slot {
  content: HTMLElement;
  status: HTMLElement;
  charts: Chart[];
  token: number;
  redraw: (() => void) | null;
}

function newSlot(name: string): Slot {
  return {
    content: h("div", { testid: `${name}-content` }),
    status: h("div", { class: "adv-status", testid: `${name}-state`, attrs: { "aria-live": "polite" } }),
    charts: [],
    token: 0,
    redraw: null,
  };
}

export class AdvisorApp {
  private theme: Theme = "light";
  private runs: RunInfo[] = [];
  private doctor: Doctor | null = null;
  private state: TabState = initialState();
  private view: Panel = "report";
  private shownDiff = "";
  private shownTrend = "";
  private readonly slots: Record<Panel, Slot> = { report: newSlot("report"), diff: newSlot("diff"), doctor: newSlot("doctor"), trend: newSlot("trend") };
  private readonly panels: Record<Panel, HTMLElement>;
  private readonly navButtons: Record<Panel, HTMLButtonElement>;
  private readonly runSelect = h("select", { testid: "run-select", attrs: { "aria-label": "Run" } });
  private readonly hostSelect = h("select", { testid: "host-select", attrs: { "aria-label": "Host" } });
  private readonly baselineSelect = h("select", { testid: "diff-baseline", attrs: { "aria-label": "Baseline run" } });
  private readonly candidateSelect = h("select", { testid: "diff-candidate", attrs: { "aria-label": "Candidate run" } });
  private readonly trendSelect = h("select", { testid: "trend-select", attrs: { "aria-label": "Series" } });
  private readonly trendInput = h("input", { class: "adv-filter", testid: "trend-pattern", attrs: { type: "text", "aria-label": "Runs matching", placeholder: "run prefix or glob" } });

  constructor(root: HTMLElement) {
    const nav = (p: Panel, label: string) =>
      h("button", { class: "adv-nav-btn", testid: `nav-${p}`, attrs: { type: "button" }, on: { click: () => this.show(p) } }, label);
    this.navButtons = { report: nav("report", "Report"), diff: nav("diff", "Compare runs"), trend: nav("trend", "Trend"), doctor: nav("doctor", "Doctor") };
    this.runSelect.addEventListener("change", () => this.onRunChange());
    this.hostSelect.addEventListener("change", () => {
      this.saveState();
      void this.loadReport();
    });
    // A pair is compared as soon as both runs are chosen; the button runs it again.
    this.baselineSelect.addEventListener("change", () => this.onPairChange());
    this.candidateSelect.addEventListener("change", () => this.onPairChange());
    const compare = h("button", { class: "adv-primary", testid: "diff-compare", attrs: { type: "button" }, on: { click: () => void this.loadDiff() } }, "Compare");
    // A series from the list replaces the typed pattern; a typed one is shown on Enter or "Show".
    this.trendSelect.addEventListener("change", () => {
      this.trendInput.value = this.trendSelect.value;
      void this.loadTrend();
    });
    this.trendInput.addEventListener("keydown", (ev) => {
      if ((ev as KeyboardEvent).key === "Enter") void this.loadTrend();
    });
    const showTrend = h("button", { class: "adv-primary", testid: "trend-show", attrs: { type: "button" }, on: { click: () => void this.loadTrend() } }, "Show");
    const reload = h("button", { testid: "reload", attrs: { type: "button", title: "Reload the run list and analysis" }, on: { click: () => void this.start() } }, "Reload");
    this.panels = {
      report: h(
        "div",
        { class: "adv-panel", testid: "panel-report" },
        h("div", { class: "adv-controls" }, h("label", null, "Run ", this.runSelect), h("label", null, "Host ", this.hostSelect), reload),
        this.slots.report.status,
        this.slots.report.content,
      ),
      diff: h(
        "div",
        { class: "adv-panel", testid: "panel-diff" },
        h(
          "div",
          { class: "adv-controls" },
          h("label", null, "Baseline ", this.baselineSelect),
          h("label", null, "Candidate ", this.candidateSelect),
          compare,
        ),
        this.slots.diff.status,
        this.slots.diff.content,
      ),
      trend: h(
        "div",
        { class: "adv-panel", testid: "panel-trend" },
        h("div", { class: "adv-controls" }, h("label", null, "Series ", this.trendSelect), h("label", null, "or runs matching ", this.trendInput), showTrend),
        this.slots.trend.status,
        this.slots.trend.content,
      ),
      doctor: h("div", { class: "adv-panel", testid: "panel-doctor" }, this.slots.doctor.status, this.slots.doctor.content),
    };
    replace(
      root,
      h(
        "div",
        { class: "adv-root", testid: "advisor" },
        h("header", { class: "adv-header" }, h("span", { class: "adv-brand" }, "Advisor"), h("nav", null, Object.values(this.navButtons))),
        Object.values(this.panels),
      ),
    );
    this.show(this.state.view ?? "report");
  }

  /** Write what is shown into the iframe's hash (replaceState: no history entry per click). */
  private saveState(): void {
    const state: TabState = {
      view: this.view,
      run: this.runSelect.value || undefined,
      host: this.hostSelect.value || undefined,
      baseline: this.baselineSelect.value || undefined,
      candidate: this.candidateSelect.value || undefined,
      trend: this.trendInput.value.trim() || undefined,
    };
    try {
      window.history.replaceState(null, "", withHash(stateHash(state)));
      const page = tensorboardPage();
      if (page) {
        const loc = page.location;
        // Keep TensorBoard's history state object: its router reads it.
        page.history.replaceState(page.history.state, "", loc.pathname + loc.search + pageHashWith(loc.hash, state));
      }
    } catch {
      // sandboxed frame without history access: the tab still works, without shareable state
    }
  }

  private onPairChange(): void {
    this.saveState();
    void this.loadDiff();
  }

  /** Follow TensorBoard's dark-mode switch and the OS setting; redraw charts in the new colours. */
  watchTheme(win: Window): void {
    const media = win.matchMedia ? win.matchMedia("(prefers-color-scheme: dark)") : null;
    const apply = () => {
      const t = resolveTheme(readParentDark(win), media?.matches ?? false);
      if (t === this.theme && document.documentElement.dataset.theme === t) return;
      this.theme = t;
      document.documentElement.dataset.theme = t;
      for (const slot of Object.values(this.slots)) slot.redraw?.();
    };
    apply();
    media?.addEventListener?.("change", apply);
    try {
      if (win.parent && win.parent !== win) {
        new MutationObserver(apply).observe(win.parent.document.body, { attributes: true, attributeFilter: ["class"] });
      }
    } catch {
      // cross-origin parent: the media query is all we have
    }
  }

  show(p: Panel): void {
    for (const [name, el] of Object.entries(this.panels)) el.hidden = name !== p;
    for (const [name, b] of Object.entries(this.navButtons)) {
      b.classList.toggle("active", name === p);
      b.setAttribute("aria-pressed", String(name === p));
    }
    this.view = p;
    if (p === "doctor" && !this.doctor) void this.loadDoctor();
    if (this.runs.length) this.saveState();
    if (p === "diff" && this.runs.length && this.shownDiff !== this.pairKey()) void this.loadDiff();
    if (p === "trend" && this.runs.length && this.shownTrend !== this.trendInput.value.trim()) void this.loadTrend();
  }

  private pairKey(): string {
    return JSON.stringify([this.baselineSelect.value, this.candidateSelect.value]);
  }

  async start(): Promise<void> {
    const slot = this.slots.report;
    this.setLoading(slot, "Looking for profile runs…");
    const res = await getJson<RunsResponse>(runsUrl());
    if (!res.ok) {
      this.setError(slot, `Could not list the runs: ${res.error}`);
      return;
    }
    this.runs = Array.isArray(res.data.runs) ? res.data.runs : [];
    const names = this.runs.map((r) => r.run);
    // First load: the URL's run and pair; a reload keeps what is selected.
    const keep = this.runSelect.value || this.state.run || "";
    replace(this.runSelect, this.runs.map((r) => option(r.run, `${r.run} · ${frameworkLabel(r)}`, r.run === keep)));
    const b = this.baselineSelect.value;
    const c = this.candidateSelect.value;
    // Runs come newest first (xprof's order): by default compare the newest with the one before.
    const [defBase, defCand] = initialDiffPair(names, this.state);
    replace(this.baselineSelect, names.map((n) => option(n, n, n === (names.includes(b) ? b : defBase))));
    replace(this.candidateSelect, names.map((n) => option(n, n, n === (names.includes(c) ? c : defCand))));
    const choices = seriesChoices(this.runs);
    const pattern = this.trendInput.value.trim() || defaultSeries(choices, this.state.trend, this.runSelect.value);
    replace(this.trendSelect, choices.map((x) => option(x.value, x.label, x.value === pattern)));
    if (!choices.some((x) => x.value === pattern)) this.trendSelect.selectedIndex = -1;
    this.trendInput.value = pattern;
    void this.loadDoctor();
    if (this.runs.length === 0) {
      if (this.view === "trend") void this.loadTrend();
      this.clearCharts(slot);
      replace(slot.content);
      this.setMessage(
        slot,
        "empty",
        "No profile runs found under this logdir.",
        "The Advisor reads <logdir>/**/plugins/profile/<session>/<host>.xplane.pb. The Doctor tab explains what was found and how to fix it.",
      );
      return;
    }
    this.onRunChange();
    if (this.view === "diff") void this.loadDiff();
    if (this.view === "trend") void this.loadTrend();
  }

  private onRunChange(): void {
    const run = this.currentRun();
    const keepHost = this.hostSelect.value || (run?.run === this.state.run ? this.state.host ?? "" : "");
    const hosts = run?.hosts ?? [];
    replace(this.hostSelect, option("", "All hosts", true), hosts.map((x) => option(x, x, x === keepHost)));
    this.hostSelect.disabled = hosts.length < 2;
    this.saveState();
    void this.loadReport();
  }

  private currentRun(): RunInfo | undefined {
    return this.runs.find((r) => r.run === this.runSelect.value) ?? this.runs[0];
  }

  private async loadReport(): Promise<void> {
    const run = this.currentRun();
    if (!run) return;
    const host = this.hostSelect.value;
    const slot = this.slots.report;
    const res = await this.poll<Report>(slot, reportUrl(run.run, host || null), `Analysing ${run.run}`);
    if (!res) return;
    const draw = () => {
      const v = renderReport(res, { theme: this.theme, run, host });
      this.clearCharts(slot);
      replace(slot.content, v.el);
      slot.charts = v.draw();
    };
    slot.redraw = draw;
    draw();
  }

  private async loadDiff(): Promise<void> {
    const b = this.baselineSelect.value;
    const c = this.candidateSelect.value;
    const slot = this.slots.diff;
    this.shownDiff = this.pairKey();
    if (!b || !c || b === c) {
      // An error never sits above the previous pair's result: it would read as this pair's.
      slot.token++;
      this.clearCharts(slot);
      replace(slot.content);
      slot.redraw = null;
      this.setMessage(slot, "error", !b || !c ? "Pick a baseline and a candidate run." : "Baseline and candidate are the same run: pick two different runs.");
      return;
    }
    const res = await this.poll<Diff>(slot, diffUrl(b, c), `Comparing ${b} with ${c}`);
    if (!res) {
      this.shownDiff = "";
      return;
    }
    const draw = () => {
      const v = renderDiff(res, this.theme);
      this.clearCharts(slot);
      replace(slot.content, v.el);
      slot.charts = v.draw();
    };
    slot.redraw = draw;
    draw();
  }

  private async loadTrend(): Promise<void> {
    const pattern = this.trendInput.value.trim();
    const slot = this.slots.trend;
    this.shownTrend = pattern;
    this.trendSelect.selectedIndex = [...this.trendSelect.options].findIndex((o) => o.value === pattern);
    this.saveState();
    if (!pattern) {
      slot.token++;
      this.clearCharts(slot);
      replace(slot.content);
      slot.redraw = null;
      this.setMessage(slot, "empty", this.runs.length ? "Pick a series or type a run prefix." : "No profile runs found under this logdir.");
      return;
    }
    const res = await this.poll<Trend>(slot, trendUrl(pattern), `Analysing the captures of ${pattern}`);
    if (!res) {
      this.shownTrend = "";
      return;
    }
    const known = new Set(this.runs.map((r) => r.run));
    const draw = () => {
      const v = renderTrend(res, pattern, { theme: this.theme, known, openReport: (run) => this.openReport(run), openDiff: (b, c) => this.openDiff(b, c) });
      this.clearCharts(slot);
      replace(slot.content, v.el);
      slot.charts = v.draw();
    };
    slot.redraw = draw;
    draw();
  }

  /** From the Trend view: the Report view on this capture, all hosts. */
  private openReport(run: string): void {
    if (!this.runs.some((r) => r.run === run)) return;
    this.runSelect.value = run;
    this.hostSelect.value = "";
    this.show("report");
    this.onRunChange();
  }

  /** From the Trend view: the Compare view on the captures either side of a change point. */
  private openDiff(baseline: string, candidate: string): void {
    this.baselineSelect.value = baseline;
    this.candidateSelect.value = candidate;
    this.show("diff");
  }

  private async loadDoctor(): Promise<void> {
    const slot = this.slots.doctor;
    const res = await this.poll<Doctor>(slot, doctorUrl(), "Checking the logdir");
    if (!res) return;
    this.doctor = res;
    replace(slot.content, renderDoctor(res));
    const n = doctorProblemCount(res);
    replace(this.navButtons.doctor, "Doctor", n > 0 ? h("span", { class: "adv-count", testid: "doctor-count" }, String(n)) : null);
  }

  /** GET with 202 polling, showing a loading line meanwhile; null when failed or superseded. */
  private async poll<T>(slot: Slot, url: string, what: string): Promise<T | null> {
    const token = ++slot.token;
    // Never leave another run's results under the loading line: they would read as this run's.
    this.clearCharts(slot);
    replace(slot.content);
    slot.redraw = null;
    this.setLoading(slot, `${what}…`);
    const res: ApiResult<T> = await getJson<T>(url, {
      cancelled: () => token !== slot.token,
      onPending: (ms, body) => {
        if (token !== slot.token) return;
        this.setLoading(slot, `${what}… still running after ${Math.round(ms / 1000)} s (large profiles take a while).`);
        this.showProgress(slot, body);
      },
    });
    if (token !== slot.token) return null;
    if (!res.ok) {
      if (res.error !== CANCELLED) {
        this.clearCharts(slot);
        replace(slot.content);
        slot.redraw = null;
        this.setError(slot, res.error);
      }
      return null;
    }
    replace(slot.status);
    slot.status.className = "adv-status";
    return res.data;
  }

  private clearCharts(slot: Slot): void {
    for (const c of slot.charts) c.destroy();
    slot.charts = [];
  }

  private setLoading(slot: Slot, text: string): void {
    this.setMessage(slot, "loading", text);
  }

  /** Progress bars under the loading line: one per run being read (two for a diff). */
  private showProgress(slot: Slot, body: unknown): void {
    const parts = progressParts(body);
    if (parts.length === 0) return;
    const box = slot.status.querySelector('[data-testid="loading"]');
    if (!box) return;
    box.appendChild(
      h(
        "div",
        { class: "adv-progress-list" },
        parts.map(({ label, progress }) => {
          const bar = h("progress", { attrs: { max: "1" } }) as HTMLProgressElement;
          const fraction = progressFraction(progress);
          if (fraction !== null) bar.value = fraction;
          return h(
            "div",
            { class: "adv-progress", testid: "progress", attrs: { "data-stage": progress.stage ?? "" } },
            label ? h("span", { class: "adv-progress-label" }, label) : null,
            bar,
            h("span", { class: "adv-muted" }, progressLine(progress) ?? ""),
          );
        }),
      ),
    );
  }

  private setError(slot: Slot, text: string): void {
    this.setMessage(slot, "error", text);
  }

  private setMessage(slot: Slot, kind: "loading" | "error" | "empty", text: string, detail?: string): void {
    slot.status.className = `adv-status adv-${kind}`;
    replace(
      slot.status,
      h(
        "div",
        { testid: kind, attrs: { role: kind === "error" ? "alert" : "status" } },
        kind === "loading" ? h("span", { class: "adv-spinner", attrs: { "aria-hidden": "true" } }) : null,
        h("span", null, text),
        detail ? h("p", { class: "adv-muted" }, detail) : null,
      ),
    );
  }
}
