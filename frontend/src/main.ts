// Entry point TensorBoard loads: plugin_entry.html imports this module and calls render().

import css from "./style.css?inline";
import { AdvisorApp } from "./app";

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
