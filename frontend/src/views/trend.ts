// The Trend view: per series, the median step of each capture with its p10–p90 spread, the noise
// band the change-point test measures against, the change points marked, and each change's cause.
// A capture opens its report and a change point the diff across it; the app does the switching.

import { trendChart, type Chart } from "../charts";
import type { Theme } from "../chartdata";
import { h } from "../dom";
import { formatMs, formatNumber, formatPct } from "../format";
import {
  uncountedLabel,
  uncountedMoves,
  capturePosition,
  captureTimeLabel,
  changeEvidence,
  changeLine,
  seriesSummary,
  significantChanges,
  trendChartData,
  usable,
} from "../trenddata";
import type { Trend, TrendCapture, TrendChangePoint, TrendSeries } from "../types";
import { badge, card, chartBox, list, note } from "./common";

export interface TrendCtx {
  theme: Theme;
  /** Runs the run list knows: only those can be opened in the Report and Compare views. */
  known: ReadonlySet<string>;
  openReport: (run: string) => void;
  openDiff: (baseline: string, candidate: string) => void;
}

function captureNumber(c: TrendCapture | undefined, position: number): string {
  return `#${(typeof c?.index === "number" ? c.index : position) + 1}`;
}

function reportButton(run: string, ctx: TrendCtx): HTMLElement {
  if (!ctx.known.has(run)) return h("span", { class: "adv-name", title: "not in the run list: press Reload" }, run);
  return h(
    "button",
    { class: "adv-linkbtn adv-name", testid: "trend-open-report", title: "Open this capture's report", attrs: { type: "button", "data-run": run }, on: { click: () => ctx.openReport(run) } },
    run,
  );
}

function changeBlock(s: TrendSeries, p: TrendChangePoint, ctx: TrendCtx): HTMLElement {
  const captures = s.captures ?? [];
  const at = capturePosition(s, p.index);
  const before = p.previous_run ?? "";
  const after = p.run ?? "";
  const canCompare = before !== "" && after !== "" && ctx.known.has(before) && ctx.known.has(after);
  const slower = (p.delta_pct ?? 0) > 0;
  return h(
    "div",
    { class: `adv-rec sev-${slower ? "bad" : "ok"}`, testid: "trend-change", attrs: { "data-index": String(p.index ?? ""), "data-significant": "true" } },
    h(
      "header",
      null,
      h("h3", null, `Change at capture ${captureNumber(captures[at], at)}: ${changeLine(p)}`),
      badge(slower ? "slower" : "faster", slower ? "bad" : "ok"),
    ),
    h("p", { class: "adv-rec-message", testid: "trend-cause" }, p.cause?.summary ? `Cause: ${p.cause.summary}` : "No single category explains it."),
    note(changeEvidence(p), "trend-evidence"),
    canCompare
      ? h(
          "button",
          {
            testid: "trend-open-diff",
            title: "Compare the last capture before the change with the first after it",
            attrs: { type: "button", "data-baseline": before, "data-candidate": after },
            on: { click: () => ctx.openDiff(before, after) },
          },
          `Compare ${captureNumber(captures[at - 1], at - 1)} → ${captureNumber(captures[at], at)}`,
        )
      : null,
  );
}

/** `changeAt`: position of each capture where a significant change starts → whether it got slower. */
function capturesTable(s: TrendSeries, changeAt: ReadonlyMap<number, boolean>, ctx: TrendCtx): HTMLElement {
  const captures = s.captures ?? [];
  const head = ["#", "Captured (UTC)", "Capture", "Median step", "p10–p90", "Spread", "Verdict"];
  const num = new Set([3, 4, 5]);
  return h(
    "table",
    { class: "adv-table", testid: "trend-captures" },
    h("thead", null, h("tr", null, head.map((t, i) => h("th", { class: num.has(i) ? "num" : "" }, t)))),
    h(
      "tbody",
      null,
      captures.map((c, i) => {
        const run = c.run ?? "";
        const ok = usable(c);
        const slower = changeAt.get(i);
        const mark = slower === undefined ? null : h("span", { class: slower ? "adv-slower" : "adv-faster", testid: "trend-mark" }, slower ? " ▲" : " ▼");
        return h(
          "tr",
          { testid: "trend-capture", attrs: { "data-index": String(c.index ?? i), "data-run": run, "data-change": String(changeAt.has(i)) } },
          h("td", null, captureNumber(c, i), mark),
          h("td", { class: "adv-nowrap" }, captureTimeLabel(c.captured_at)),
          h("td", null, run ? reportButton(run, ctx) : "–"),
          h("td", { class: "num" }, ok ? formatMs(c.step_ms) : "–"),
          h("td", { class: "num" }, ok ? `${formatNumber(c.p10_ms)}–${formatNumber(c.p90_ms)}` : "–"),
          h("td", { class: "num" }, ok ? formatPct(c.spread_pct) : "–"),
          h("td", null, c.error ? h("span", { class: "adv-slower" }, c.error) : c.verdict ?? ""),
        );
      }),
    ),
  );
}

function seriesCard(s: TrendSeries, ctx: TrendCtx): { el: HTMLElement; draw: () => Chart | null } {
  const captures = s.captures ?? [];
  const data = trendChartData(s);
  const changes = significantChanges(s);
  const uncounted = uncountedMoves(s);
  const { box, canvas } = chartBox("chart-trend", 300, "Median step time per capture with its p10–p90 spread, the noise band and the change points");
  canvas.setAttribute("data-change-points", changes.map((p) => String(p.index)).join(" "));
  const el = h(
    "section",
    { class: "adv-card", testid: "trend-series", attrs: { "data-series": s.run ?? "" } },
    h("h2", null, "Trend of ", h("span", { class: "adv-name" }, s.run ?? "")),
    note(seriesSummary(s), "trend-summary"),
    data.median.some((v) => v !== null) ? box : note("No capture of this series has steps to plot."),
    note("The band is the noise between captures around each segment; a triangle marks a change point. Click a capture to open its report."),
    changes.map((p) => changeBlock(s, p, ctx)),
    uncounted.map((p) =>
      note(`${uncountedLabel(p)}: capture ${captureNumber(captures[capturePosition(s, p.index)], capturePosition(s, p.index))}, ${changeLine(p)} — ${p.reason ?? "within the noise"} (${changeEvidence(p)}).`, "trend-candidate"),
    ),
    capturesTable(s, new Map(changes.map((p) => [capturePosition(s, p.index), (p.delta_pct ?? 0) > 0])), ctx),
    list(s.notes ?? [], "trend-notes"),
  );
  const openAt = (i: number) => {
    const run = captures[i]?.run;
    if (run && ctx.known.has(run)) ctx.openReport(run);
  };
  return {
    el,
    draw: () => (data.median.some((v) => v !== null) ? trendChart(canvas, data, ctx.theme, { onCapture: openAt, titleOf: (i) => captures[i]?.run ?? "" }) : null),
  };
}

export function renderTrend(trend: Trend, pattern: string, ctx: TrendCtx): { el: HTMLElement; draw: () => Chart[] } {
  const cards = (trend.series ?? []).map((s) => seriesCard(s, ctx));
  const el = h(
    "div",
    { class: "adv-report", testid: "trend", attrs: { "data-run": pattern } },
    cards.length ? cards.map((c) => c.el) : card("Trend", "trend-empty", note("No series in this answer.")),
  );
  return { el, draw: () => cards.map((c) => c.draw()).filter((c): c is Chart => c !== null) };
}
