// The only way the tab creates DOM: elements plus text nodes. There is deliberately no way to pass
// HTML or an inline event-handler attribute, so a run or op name can never become markup.

export type Child = Node | string | number | null | undefined | false | Child[];

export interface Props {
  class?: string;
  testid?: string;
  title?: string;
  attrs?: Record<string, string>;
  on?: Partial<Record<keyof HTMLElementEventMap, (ev: Event) => void>>;
}

function append(el: Node, child: Child): void {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) {
    for (const c of child) append(el, c);
  } else if (child instanceof Node) {
    el.appendChild(child);
  } else {
    el.appendChild(document.createTextNode(String(child)));
  }
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props?.class) el.className = props.class;
  if (props?.testid) el.setAttribute("data-testid", props.testid);
  if (props?.title) el.title = props.title;
  for (const [k, v] of Object.entries(props?.attrs ?? {})) {
    if (/^on/i.test(k)) throw new Error(`inline handler attribute ${k} is not allowed`);
    el.setAttribute(k, v);
  }
  for (const [ev, fn] of Object.entries(props?.on ?? {})) {
    if (fn) el.addEventListener(ev, fn);
  }
  append(el, children);
  return el;
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

export function replace(el: Element, ...children: Child[]): void {
  clear(el);
  append(el, children);
}

export function option(value: string, label: string, selected = false): HTMLOptionElement {
  const o = h("option", null, label);
  o.value = value;
  o.selected = selected;
  return o;
}

/** Rows a table shows before its "Show all N" button: a page a person can scan. */
export const TABLE_ROWS = 10;

/** A table of at most `cap` rows and, past that, a "Show all N" button that draws the rest. */
export function cappedTable(testid: string, headers: string[], rows: Child[][], numericCols: number[] = [], cap = TABLE_ROWS): HTMLElement {
  return capped(testid, rows.length, (shown) => table(testid, headers, rows.slice(0, shown), numericCols), cap);
}

/** `render(n)` draws a table's first n rows; past `cap` rows a "Show all N" button redraws it whole. For
 * tables whose rows carry their own attributes (cappedTable covers plain cells). */
export function capped(testid: string, total: number, render: (shown: number) => Node, cap = TABLE_ROWS): HTMLElement {
  const box = h("div", { class: "adv-capped", testid: `${testid}-box` });
  const draw = (all: boolean) => {
    replace(
      box,
      render(all ? total : Math.min(cap, total)),
      total > cap && !all
        ? h("button", { class: "adv-show-all", testid: `${testid}-all`, attrs: { type: "button" }, on: { click: () => draw(true) } }, `Show all ${total}`)
        : null,
    );
  };
  draw(false);
  return box;
}

/** A plain table: header labels plus rows of cells (strings become text). */
export function table(testid: string, headers: string[], rows: Child[][], numericCols: number[] = []): HTMLTableElement {
  const num = new Set(numericCols);
  return h(
    "table",
    { class: "adv-table", testid },
    h("thead", null, h("tr", null, headers.map((t, i) => h("th", { class: num.has(i) ? "num" : "" }, t)))),
    h(
      "tbody",
      null,
      rows.map((r) => h("tr", null, r.map((c, i) => h("td", { class: num.has(i) ? "num" : "" }, c)))),
    ),
  );
}
