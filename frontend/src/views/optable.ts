// The op table of the report: filter box, top-N, % of step. Rows re-render as the user types.

import { categoryInfo } from "../categories";
import { h, option, replace, table } from "../dom";
import { formatNumber, formatPct } from "../format";
import { DEFAULT_TOP_N, TOP_N_CHOICES, filterOps, pctOfStep } from "../opfilter";
import type { Theme } from "../chartdata";
import type { Named, OpRow } from "../types";

/** A long op name that breaks after its separators (`/`, `:`), never inside a word. */
/** A kernel's or op's name as a table shows it: the short name, the full name on hover. */
export function shownName(row: Named): string {
  return row.short_name || row.name;
}

export function nameCell(row: Named): HTMLElement {
  const cell = opName(shownName(row));
  cell.title = row.name;
  return cell;
}

export function opName(name: string): HTMLElement {
  const parts = name.split(/(?<=[/:])/);
  return h("span", { class: "adv-name" }, parts.map((p, i) => (i < parts.length - 1 ? [p, h("wbr", null)] : p)));
}

export function categoryCell(key: string | undefined, theme: Theme): HTMLElement {
  const c = categoryInfo(key ?? "other");
  const sw = h("span", { class: "adv-swatch", attrs: { "aria-hidden": "true" } });
  sw.style.background = theme === "dark" ? c.dark : c.light;
  return h("span", { class: "adv-nowrap", attrs: { title: c.help } }, sw, c.label);
}

export function opTable(ops: readonly OpRow[], stepMs: number | null | undefined, theme: Theme, testid = "ops-table"): HTMLElement {
  const filter = h("input", {
    class: "adv-filter",
    testid: `${testid}-filter`,
    attrs: { type: "search", placeholder: "Filter ops by name or category", "aria-label": "Filter ops" },
  }) as HTMLInputElement;
  const topN = h(
    "select",
    { testid: `${testid}-topn`, attrs: { "aria-label": "Rows shown" } },
    TOP_N_CHOICES.map((n) => option(String(n), n > 0 ? `top ${n}` : "all", n === DEFAULT_TOP_N)),
  ) as HTMLSelectElement;
  const count = h("span", { class: "adv-muted", testid: `${testid}-count` });
  const body = h("div", null);
  const draw = () => {
    const view = filterOps(ops, filter.value, Number(topN.value));
    replace(count, `${view.rows.length} of ${view.matching} matching (${view.total} ops)`);
    // Host ops nest (aten::conv2d > … > aten::mkldnn_convolution): rows show self time, so they add
    // up to at most the step, with the inclusive time and the enclosing op beside it.
    const nested = ops.some((o) => o.total_ms !== undefined);
    const label = (o: OpRow): HTMLElement => {
      const name = o.onednn_op
        ? h("span", null, nameCell(o), " ", h("span", { class: "adv-muted", testid: "onednn-name", attrs: { title: "TensorFlow ran this op through oneDNN under this name" } }, `(oneDNN ${o.onednn_op})`))
        : nameCell(o);
      return o.within ? h("span", null, name, " ", h("span", { class: "adv-muted", testid: "op-within", attrs: { title: "the outermost op this one runs inside" } }, `in ${o.within}`)) : name;
    };
    replace(
      body,
      table(
        testid,
        nested
          ? ["Op", "Category", "self ms per step", "% of step", "total ms per step", "count per step"]
          : ["Op", "Category", "ms per step", "% of step", "count per step"],
        view.rows.map((o) => [
          label(o),
          categoryCell(o.category, theme),
          formatNumber(o.time_ms),
          formatPct(pctOfStep(o.time_ms, stepMs)),
          ...(nested ? [formatNumber(o.total_ms)] : []),
          formatNumber(o.count),
        ]),
        nested ? [2, 3, 4, 5] : [2, 3, 4],
      ),
    );
  };
  filter.addEventListener("input", draw);
  topN.addEventListener("change", draw);
  draw();
  return h("div", { class: "adv-optable" }, h("div", { class: "adv-controls" }, filter, " ", topN, " ", count), body);
}
