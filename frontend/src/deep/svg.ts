// SVG elements for the deeper-view charts, created as nodes (never from markup), like dom.ts's h().

const NS = "http://www.w3.org/2000/svg";

export function s<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number> = {},
  ...children: (SVGElement | string | null)[]
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (/^on/i.test(k)) throw new Error(`inline handler attribute ${k} is not allowed`);
    el.setAttribute(k, String(v));
  }
  for (const c of children) {
    if (c === null) continue;
    el.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return el;
}

/** A <title> child: the browser shows it as the element's tooltip. */
export function tip(text: string): SVGTitleElement {
  return s("title", {}, text);
}
