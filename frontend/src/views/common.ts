// Small building blocks shared by the report, diff and doctor views.

import { copyText } from "../clipboard";
import { h, type Child } from "../dom";
import type { Severity } from "../verdict";

export function card(title: string, testid: string, ...children: Child[]): HTMLElement {
  return h("section", { class: "adv-card", testid }, h("h2", null, title), ...children);
}

export function badge(text: string, severity: Severity, testid?: string): HTMLElement {
  return h("span", { class: `adv-badge sev-${severity}`, testid }, text);
}

export function note(text: string, testid?: string): HTMLElement {
  return h("p", { class: "adv-muted", testid }, text);
}

export function list(items: string[], testid?: string): HTMLElement | null {
  if (items.length === 0) return null;
  return h("ul", { class: "adv-list", testid }, items.map((t) => h("li", null, t)));
}

/** A canvas in a fixed-height box: Chart.js sizes itself to the box. */
export function chartBox(testid: string, height: number, label: string): { box: HTMLElement; canvas: HTMLCanvasElement } {
  const canvas = h("canvas", { testid, attrs: { role: "img", "aria-label": label } });
  const box = h("div", { class: "adv-chart" }, canvas);
  box.style.height = `${height}px`;
  return { box, canvas };
}

/** A code block with a copy button that confirms with "Copied". */
export function snippet(label: string, code: string, testid: string): HTMLElement {
  const button = h("button", { class: "adv-copy", testid: "copy-snippet", attrs: { type: "button" } }, "Copy");
  button.addEventListener("click", () => {
    void copyText(code).then((ok) => {
      button.textContent = ok ? "Copied" : "Copy failed";
      button.classList.toggle("done", ok);
      window.setTimeout(() => {
        button.textContent = "Copy";
        button.classList.remove("done");
      }, 2000);
    });
  });
  return h(
    "div",
    { class: "adv-snippet", testid },
    h("div", { class: "adv-snippet-head" }, h("span", null, label), button),
    h("pre", null, h("code", null, code)),
  );
}
