// Paths are relative to this folder (npm runs scripts here).
// One deterministic file, index.js: TensorBoard imports it as the tab's ES module and calls render().
// No content hashes, no source maps, CSS injected from JS, so a rebuild reproduces the committed bytes.
import { defineConfig } from "vitest/config";

export default defineConfig({
  // Relative base: the bundle is served under /data/plugin/advisor/ behind any --path_prefix.
  base: "./",
  publicDir: false,
  build: {
    outDir: "../tb_plugin_advisor/static",
    emptyOutDir: true,
    target: "es2020",
    minify: true,
    sourcemap: false,
    reportCompressedSize: false,
    copyPublicDir: false,
    lib: {
      entry: "src/main.ts",
      formats: ["es"],
      fileName: () => "index.js",
    },
    rolldownOptions: {
      // Library mode keeps whitespace for ES output; this bundle is an app, so minify it fully.
      // The minifier drops the libraries' own license comments, so the notice is restated here.
      output: {
        minify: true,
        postBanner:
          "/*! tb-plugin-advisor Advisor tab (Apache-2.0). Bundles Chart.js (MIT License, (c) Chart.js Contributors, " +
          "https://www.chartjs.org) and @kurkle/color (MIT License, (c) Jukka Kurkela). */",
      },
    },
  },
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
  },
});
