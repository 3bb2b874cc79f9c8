// The tab's shell: navigation, selectors, loading/error states and theme. Data comes from the
// routes in api.ts/urls.ts; every section is drawn by a view module.

import { CANCELLED, getJson, type ApiResult } from "./api";
import type { Chart } from "./charts";
import { defaultDiffPair } from "./diffops";
import type { Theme } from "./chartdata";
import { h, option, replace } from "./dom";
import type { Diff, Doctor, Report, RunInfo, RunsResponse } from "./types";
import { diffUrl, doctorUrl, frameworkLabel, reportUrl, runsUrl } from "./urls";
import { readParentDark, resolveTheme } from "./theme";
import { renderDiff } from "./views/diff";
import { doctorProblemCount, renderDoctor } from "./views/doctor";
import { renderReport } from "./views/report";

type Panel = "report" | "diff" | "doctor";

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
  private readonly slots: Record<Panel, Slot> = { report: newSlot("report"), diff: newSlot("diff"), doctor: newSlot("doctor") };
  private readonly panels: Record<Panel, HTMLElement>;
  private readonly navButtons: Record<Panel, HTMLButtonElement>;
  private readonly runSelect = h("select", { testid: "run-select", attrs: { "aria-label": "Run" } });
  private readonly hostSelect = h("select", { testid: "host-select", attrs: { "aria-label": "Host" } });
  private readonly baselineSelect = h("select", { testid: "diff-baseline", attrs: { "aria-label": "Baseline run" } });
  private readonly candidateSelect = h("select", { testid: "diff-candidate", attrs: { "aria-label": "Candidate run" } });

  constructor(root: HTMLElement) {
    const nav = (p: Panel, label: string) =>
      h("button", { class: "adv-nav-btn", testid: `nav-${p}`, attrs: { type: "button" }, on: { click: () => this.show(p) } }, label);
    this.navButtons = { report: nav("report", "Report"), diff: nav("diff", "Compare runs"), doctor: nav("doctor", "Doctor") };
    this.runSelect.addEventListener("change", () => this.onRunChange());
    this.hostSelect.addEventListener("change", () => void this.loadReport());
    const compare = h("button", { class: "adv-primary", testid: "diff-compare", attrs: { type: "button" }, on: { click: () => void this.loadDiff() } }, "Compare");
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
    this.show("report");
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
    if (p === "doctor" && !this.doctor) void this.loadDoctor();
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
    const keep = this.runSelect.value;
    replace(this.runSelect, this.runs.map((r) => option(r.run, `${r.run} · ${frameworkLabel(r)}`, r.run === keep)));
    const names = this.runs.map((r) => r.run);
    const b = this.baselineSelect.value;
    const c = this.candidateSelect.value;
    // Runs come newest first (xprof's order): by default compare the newest with the one before.
    const [defBase, defCand] = defaultDiffPair(names);
    replace(this.baselineSelect, names.map((n) => option(n, n, n === (names.includes(b) ? b : defBase))));
    replace(this.candidateSelect, names.map((n) => option(n, n, n === (names.includes(c) ? c : defCand))));
    void this.loadDoctor();
    if (this.runs.length === 0) {
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
  }

  private onRunChange(): void {
    const run = this.currentRun();
    const keepHost = this.hostSelect.value;
    const hosts = run?.hosts ?? [];
    replace(this.hostSelect, option("", "All hosts", true), hosts.map((x) => option(x, x, x === keepHost)));
    this.hostSelect.disabled = hosts.length < 2;
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
    if (!b || !c) {
      this.setMessage(slot, "error", "Pick a baseline and a candidate run.");
      return;
    }
    if (b === c) {
      this.setMessage(slot, "error", "Baseline and candidate are the same run: pick two different runs.");
      return;
    }
    const res = await this.poll<Diff>(slot, diffUrl(b, c), `Comparing ${b} with ${c}`);
    if (!res) return;
    const draw = () => {
      const v = renderDiff(res, this.theme);
      this.clearCharts(slot);
      replace(slot.content, v.el);
      slot.charts = v.draw();
    };
    slot.redraw = draw;
    draw();
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
      onPending: (ms) => {
        if (token === slot.token) this.setLoading(slot, `${what}… still running after ${Math.round(ms / 1000)} s (large profiles take a while).`);
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
