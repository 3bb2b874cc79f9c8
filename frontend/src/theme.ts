// Light or dark: follow TensorBoard's own switch (body.dark-mode on the parent page) when the
// parent is reachable, else the browser's prefers-color-scheme.

import type { Theme } from "./chartdata";

export function resolveTheme(parentDark: boolean | null, prefersDark: boolean): Theme {
  if (parentDark !== null) return parentDark ? "dark" : "light";
  return prefersDark ? "dark" : "light";
}

export interface ChartPalette {
  text: string;
  grid: string;
}

export const CHART_PALETTES: Readonly<Record<Theme, ChartPalette>> = {
  light: { text: "#3c4043", grid: "rgba(0,0,0,0.08)" },
  dark: { text: "#e8eaed", grid: "rgba(255,255,255,0.12)" },
};

/** body.dark-mode of TensorBoard's page, or null when the parent is another origin or absent. */
export function readParentDark(win: Window): boolean | null {
  try {
    if (!win.parent || win.parent === win) return null;
    const body = win.parent.document.body;
    return body ? body.classList.contains("dark-mode") : null;
  } catch {
    return null; // cross-origin parent
  }
}
