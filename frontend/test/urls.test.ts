import { describe, expect, it } from "vitest";
import { diffUrl, doctorUrl, frameworkLabel, profileTabUrl, profileTools, reportUrl, runsUrl } from "../src/urls";

const BASE = "http://127.0.0.1:6006/some/prefix/data/plugin/advisor/";

describe("plugin URLs", () => {
  it("are relative so they resolve under any prefix", () => {
    for (const u of [runsUrl(), doctorUrl(), reportUrl("r"), diffUrl("a", "b"), profileTabUrl("r", "overview_page")]) {
      expect(u).not.toMatch(/^[a-z]+:|^\//);
    }
    expect(new URL(reportUrl("r"), BASE).pathname).toBe("/some/prefix/data/plugin/advisor/report");
  });

  it("encode run names that look like paths or markup", () => {
    const run = "../../etc/passwd";
    const u = new URL(reportUrl(run, "h 1"), BASE);
    expect(u.pathname).toBe("/some/prefix/data/plugin/advisor/report");
    expect(u.searchParams.get("run")).toBe(run);
    expect(u.searchParams.get("host")).toBe("h 1");
    const x = new URL(reportUrl("<img src=x onerror=alert(1)>/2024&x=1#y"), BASE);
    expect(x.searchParams.get("run")).toBe("<img src=x onerror=alert(1)>/2024&x=1#y");
    expect(x.hash).toBe("");
  });

  it("leave out an empty host", () => {
    expect(reportUrl("r", "")).toBe("report?run=r");
    expect(reportUrl("r", null)).toBe("report?run=r");
  });

  it("build the diff query", () => {
    const u = new URL(diffUrl("run a", "run/b", "h1", null), BASE);
    expect(u.searchParams.get("baseline")).toBe("run a");
    expect(u.searchParams.get("candidate")).toBe("run/b");
    expect(u.searchParams.get("baseline_host")).toBe("h1");
    expect(u.searchParams.has("candidate_host")).toBe(false);
  });
});

describe("Profile tab links", () => {
  it("point at TensorBoard's own page with xprof's run/tag/host and #profile", () => {
    const u = new URL(profileTabUrl("keras/train/2024_01_01", "trace_viewer@", "vm"), BASE);
    expect(u.pathname).toBe("/some/prefix/");
    expect(u.searchParams.get("run")).toBe("keras/train/2024_01_01");
    expect(u.searchParams.get("tag")).toBe("trace_viewer@");
    expect(u.searchParams.get("host")).toBe("vm");
    expect(u.hash).toBe("#profile");
  });
  it("pick the trace viewer xprof lists for the format", () => {
    expect(profileTools("xplane").map((t) => t.tag)).toContain("trace_viewer@");
    expect(profileTools("legacy").map((t) => t.tag)).toContain("trace_viewer");
    expect(profileTools("xplane").map((t) => t.tag)).toContain("input_pipeline_analyzer");
  });

  it("offers no Profile-tab link for PyTorch runs, which xprof cannot open", () => {
    expect(profileTools("kineto")).toEqual([]);
  });

  it("labels each run with its framework", () => {
    expect(frameworkLabel({ framework: "pytorch", format: "kineto" })).toBe("PyTorch");
    expect(frameworkLabel({ format: "kineto" })).toBe("PyTorch"); // runs route without the key
    expect(frameworkLabel({ framework: "tensorflow", format: "legacy" })).toBe("TensorFlow");
    expect(frameworkLabel({ format: "xplane" })).toBe("TF/JAX");
    expect(frameworkLabel(undefined)).toBe("TF/JAX");
  });
});
