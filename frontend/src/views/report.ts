// The report view: verdict, per-step breakdown, recommendations, input pipeline, precision,
// Tensor Cores, top ops and per-host verdicts. Layout only; the words and numbers come from the
// pure modules.

import { categoryInfo } from "../categories";
import type { Chart } from "../charts";
import { breakdownRows, lowPrecisionPct, perStepBars, precisionBars, type Theme } from "../chartdata";
import { drawPrecisionChart, drawStepsChart } from "../reportcharts";
import { cappedTable, h, replace, table } from "../dom";
import { formatBytes, formatNumber, formatPct } from "../format";
import type { EligibleNotUsing, Recommendation, Report, RunInfo } from "../types";
import { frameworkLabel, profileTabUrl, profileTools } from "../urls";
import {
  deviceLine,
  evidenceList,
  gainText,
  hasAccelerator,
  inputBoundLine,
  precisionView,
  recommendationSeverity,
  sortRecommendations,
  stepsLine,
  tensorCoresEmptyText,
  verdictView,
} from "../verdict";
import { badge, card, chartBox, list, note, snippet } from "./common";
import { deepCards } from "./deep";
import { inputPipelineCard } from "./input";
import { perHostCard } from "./hosts";
import { rooflineCard } from "./roofline";
import { spansBlock } from "./spans";
import { nameCell, opName, opTable } from "./optable";
import { validityCard, withheldCard } from "./validity";
import { validityView } from "../validity";

interface Ctx {
  theme: Theme;
  run: RunInfo;
  host: string;
}

function verdictCard(r: Report, ctx: Ctx): HTMLElement {
  const v = verdictView(r.verdict, { breakdownPct: r.breakdown_pct, accelerator: hasAccelerator(r) });
  const devices = deviceLine(r);
  const mem = typeof r.peak_memory_bytes === "number" ? `peak memory ${formatBytes(r.peak_memory_bytes)}` : null;
  const tools = profileTools(ctx.run.format);
  const links = tools.length === 0 ? null : h(
    "p",
    { class: "adv-links", testid: "profile-links" },
    "Open in the Profile tab: ",
    tools.map((t, i) => [
      i > 0 ? " · " : null,
      h("a", { attrs: { href: profileTabUrl(ctx.run.run, t.tag, ctx.host || null), target: "_parent" }, testid: `profile-link-${t.tag.replace("@", "")}` }, t.label),
    ]),
  );
  const evidence = r.verdict?.evidence ?? [];
  return h(
    "section",
    { class: `adv-card adv-verdict sev-${v.severity}`, testid: "verdict-card", attrs: { "data-severity": v.severity } },
    h(
      "p",
      { class: "adv-run", testid: "report-run" },
      h("span", { class: "adv-name" }, ctx.run.run),
      " ",
      badge(frameworkLabel(ctx.run), "neutral", "framework-badge"),
      ctx.host ? ` · host ${ctx.host}` : (r.hosts?.length ?? 0) > 1 ? ` · ${r.hosts?.length} hosts` : null,
    ),
    h("h2", { testid: "verdict-headline" }, v.headline),
    r.verdict?.summary ? null : inputBoundLine(r.verdict) ? h("p", null, inputBoundLine(r.verdict)) : null,
    stepsLine(r.steps) ? note(stepsLine(r.steps) ?? "", "steps-line") : null,
    devices || mem ? note([devices, mem].filter(Boolean).join(" · ")) : null,
    list([...(r.steps?.notes ?? []), ...(r.warnings ?? [])], "warnings"),
    evidence.length
      ? h("details", { testid: "verdict-evidence" }, h("summary", null, "How the Advisor decided"), list(evidence))
      : null,
    links,
  );
}

type Drawers = (() => Chart | null)[];

function swatch(key: string, theme: Theme): HTMLElement {
  const el = h("span", { class: "adv-swatch", attrs: { "aria-hidden": "true" } });
  const c = categoryInfo(key);
  el.style.background = theme === "dark" ? c.dark : c.light;
  return el;
}

function breakdownCard(r: Report, ctx: Ctx, drawers: Drawers): HTMLElement {
  const bars = perStepBars(r, ctx.theme);
  const rows = breakdownRows(r);
  const { box, canvas } = chartBox("chart-steps", 240, "Per-step time breakdown");
  const body =
    bars.labels.length > 0
      ? box
      : note("This profile has no per-step data to chart.", "chart-steps-empty");
  const el = card(
    "Where each step's time goes",
    "breakdown-card",
    h(
      "div",
      { class: "adv-two" },
      body,
      rows.length
        ? table(
            "breakdown-table",
            ["Category", "ms per step", "% of step"],
            rows.map((row) => [
              h("span", { title: row.help }, swatch(row.key, ctx.theme), row.label),
              formatNumber(row.ms),
              formatPct(row.pct),
            ]),
            [1, 2],
          )
        : note("No breakdown in this report."),
    ),
  );
  if (bars.labels.length > 0) {
    drawers.push(() => drawStepsChart(canvas, r, ctx.theme));
  }
  return el;
}

/** The first (most severe) recommendation shows its code; the others fold it under one line, so that
 * the card lists every finding within a screen or two and a person opens the change they will make. */
function snippetsOf(rec: Recommendation, open: boolean): HTMLElement | null {
  const codes: [label: string, code: string, testid: string][] = [];
  if (rec.snippet) {
    codes.push(rec.snippet_label === "PyTorch" ? ["PyTorch", rec.snippet, "snippet-pytorch"] : ["TensorFlow / Keras", rec.snippet, "snippet-tf"]);
  }
  if (rec.snippet_jax) codes.push(["JAX", rec.snippet_jax, "snippet-jax"]);
  if (!codes.length) return null;
  const blocks = codes.map(([label, code, testid]) => snippet(label, code, testid));
  if (open) return h("div", null, blocks);
  const labels = codes.map(([label]) => label).join(", ");
  return h("details", { class: "adv-snippet-fold", testid: "snippet-fold" }, h("summary", null, `The change in code (${labels})`), blocks);
}

function recommendationsCard(r: Report, ctx: Ctx): HTMLElement {
  const recs = sortRecommendations(r.recommendations);
  return card(
    "Recommendations",
    "recommendations",
    recs.length === 0 ? note("Nothing to recommend for this run.", "no-recommendations") : null,
    recs.map((rec, index) =>
      h(
        "article",
        { class: `adv-rec sev-${recommendationSeverity(rec)}`, testid: "rec-card", attrs: { "data-rec-id": rec.id } },
        h(
          "header",
          null,
          badge(rec.severity ?? "low", recommendationSeverity(rec)),
          h("h3", null, rec.title ?? rec.id),
          h("code", { class: "adv-rec-id" }, rec.id),
        ),
        rec.message ? h("p", { class: "adv-rec-message" }, rec.message) : null,
        list(evidenceList(rec.evidence), "rec-evidence"),
        h("p", { class: "adv-rec-gain", testid: "rec-gain", attrs: { title: rec.expected_gain?.basis ?? "" } }, gainText(rec.expected_gain)),
        spansBlock(rec.evidence_spans, ctx.run.run),
        snippetsOf(rec, index === 0),
      ),
    ),
  );
}

function precisionCard(r: Report, ctx: Ctx, drawers: Drawers): HTMLElement {
  const pv = precisionView(r.precision);
  const bars = precisionBars(r.precision_pct, ctx.theme);
  const { box, canvas } = chartBox("chart-precision", Math.max(90, 34 * bars.labels.length + 40), "Precision of compute time");
  const top = r.precision?.top_fp32_ops ?? [];
  const el = card(
    "Precision",
    "precision-card",
    h("p", { class: `adv-line sev-${pv.severity}`, testid: "precision-verdict" }, badge(pv.label, pv.severity)),
    pv.detail ? h("p", null, pv.detail) : null,
    bars.labels.length
      ? [box, note(`${formatPct(lowPrecisionPct(r.precision_pct))} of compute time runs in a reduced-precision format.`)]
      : note("No precision data in this profile.", "chart-precision-empty"),
    list(r.precision?.evidence ?? []),
    top.length
      ? [h("h3", null, "Largest FP32 ops"), cappedTable("fp32-ops", ["Op", "ms per step"], top.map((o) => [nameCell(o), formatNumber(o.time_ms)]), [1], 5)]
      : null,
  );
  if (bars.labels.length) {
    drawers.push(() => drawPrecisionChart(canvas, r, ctx.theme));
  }
  return el;
}

/** Rows shown before "show all": the table of a real ResNet on a V100 stays on one screen. */
const ELIGIBLE_ROWS_SHOWN = 8;
// The Tensor Cores card's kernel list: the heaviest few say which path the device took; Kernel statistics lists all.
const TC_KERNEL_ROWS = 5;

/**
 * Eligible kernels without Tensor Cores, grouped under the op that launched them: the kernel by its
 * short name (the full signature on hover), the reason once above the table when every row shares
 * it, the largest rows first and the rest behind "show all".
 */
function eligibleTable(rows: readonly EligibleNotUsing[]): HTMLElement {
  const byOp = new Map<string, EligibleNotUsing[]>();
  for (const e of rows) {
    const key = e.op ?? "";
    byOp.set(key, [...(byOp.get(key) ?? []), e]);
  }
  const opTime = (list: EligibleNotUsing[]) => list.reduce((sum, e) => sum + (e.time_ms ?? 0), 0);
  const ordered = [...byOp.entries()].sort((a, b) => opTime(b[1]) - opTime(a[1])).flatMap(([, list]) => list);
  const reasons = new Set(rows.map((e) => e.reason ?? ""));
  const shared = reasons.size === 1 ? [...reasons][0] : null;
  const kernelCell = (e: EligibleNotUsing) =>
    h("span", { class: "adv-name", testid: "tc-kernel", attrs: { title: e.kernel ?? "" } }, e.kernel_short ?? e.kernel ?? "");
  const body = h("div", null);
  const draw = (all: boolean) => {
    const shown = all ? ordered : ordered.slice(0, ELIGIBLE_ROWS_SHOWN);
    let previous: string | undefined;
    const cells = shown.map((e) => {
      const op = e.op ?? "";
      const opCell = op === previous ? h("span", { class: "adv-muted" }, "″") : opName(op || "(no op recorded)");
      previous = op;
      const row: (HTMLElement | string)[] = [opCell, kernelCell(e), formatNumber(e.time_ms)];
      return shared === null ? [...row, e.reason ?? ""] : row;
    });
    replace(
      body,
      table("tc-eligible", shared === null ? ["Op", "Kernel", "ms per step", "Why not"] : ["Op", "Kernel", "ms per step"], cells, [2]),
      ordered.length > ELIGIBLE_ROWS_SHOWN && !all
        ? h("button", { testid: "tc-eligible-all", attrs: { type: "button" }, on: { click: () => draw(true) } }, `Show all ${ordered.length}`)
        : null,
    );
  };
  draw(false);
  return h("div", null, shared ? h("p", { testid: "tc-reason" }, `Why not: ${shared}`) : null, body);
}

function tensorCoresCard(r: Report): HTMLElement {
  const tc = r.tensor_cores ?? {};
  const kernels = [...(tc.kernels ?? [])].sort((a, b) => (b.time_ms ?? 0) - (a.time_ms ?? 0));
  const eligible = [...(tc.eligible_not_using ?? [])].sort((a, b) => (b.time_ms ?? 0) - (a.time_ms ?? 0));
  return card(
    "Tensor Cores",
    "tensor-cores",
    kernels.length === 0 && eligible.length === 0
      ? note(
          tensorCoresEmptyText(hasAccelerator(r) !== false, tc.evidence),
          "tc-empty",
        )
      : h(
          "p",
          null,
          `${formatPct(tc.device_time_pct)} of device time runs on Tensor Cores; ${formatPct(tc.eligible_time_pct)} is in ops that could but do not.`,
        ),
    eligible.length ? [h("h3", null, "Eligible but not using Tensor Cores"), eligibleTable(eligible)] : null,
    kernels.length
      ? [
          h("h3", null, "Kernels"),
          cappedTable(
            "tc-kernels",
            ["Kernel", "Tensor Cores", "Precision", "ms per step"],
            kernels.map((k) => [
              nameCell(k),
              k.uses_tensor_cores ? badge("yes", "ok") : badge("no", "neutral"),
              k.precision ?? "",
              formatNumber(k.time_ms),
            ]),
            [3],
            TC_KERNEL_ROWS,
          ),
        ]
      : null,
  );
}

function opsCard(r: Report, ctx: Ctx): HTMLElement | null {
  const ops = r.ops ?? [];
  if (ops.length === 0) return null;
  return card(`Ops (${ops.length})`, "ops-card", opTable(ops, r.steps?.mean_ms, ctx.theme));
}

/** Build the whole report. Chart.js measures its canvas, so call draw() once `el` is attached. */
export function renderReport(r: Report, ctx: Ctx): { el: HTMLElement; draw: () => Chart[] } {
  const drawers: Drawers = [];
  const validity = validityView(r.validity);
  const supports = validityCard(r, validity);
  const el = h(
    "div",
    { class: "adv-report", testid: "report", attrs: { "data-run": ctx.run.run, "data-host": ctx.host } },
    validity?.first ? supports : null,
    verdictCard(r, ctx),
    validity?.first ? null : supports,
    breakdownCard(r, ctx, drawers),
    recommendationsCard(r, ctx),
    inputPipelineCard(r),
    precisionCard(r, ctx, drawers),
    tensorCoresCard(r), // full width: kernel names are long
    perHostCard(r),
    deepCards(r),
    rooflineCard(r, ctx.theme, drawers) ?? withheldCard(r, "roofline", "Roofline", "MFU"),
    opsCard(r, ctx),
  );
  return { el, draw: () => drawers.map((d) => d()).filter((c): c is Chart => c !== null) };
}
