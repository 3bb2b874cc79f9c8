// Entry point TensorBoard loads: plugin_entry.html imports this module and calls render().

import css from "./style.css?inline";
import { AdvisorApp } from "./app";
import { drawExportCharts, EXPORT_DATA_ID } from "./exportcharts";

export async function render(): Promise<void> {
  const style = document.createElement("style");
  style.textContent = css;
  document.head.appendChild(style);
  const root = document.createElement("div");
  document.body.appendChild(root);
  const app = new AdvisorApp(root);
  app.watchTheme(window);
  await app.start();
}

// Inside an HTML export (the page carries its answer's JSON), draw its charts at once.
if (typeof document !== "undefined" && document.getElementById(EXPORT_DATA_ID)) drawExportCharts(document);
