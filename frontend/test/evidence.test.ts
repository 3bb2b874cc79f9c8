import { describe, expect, it } from "vitest";
import { formatTraceTime } from "../src/format";
import { PERFETTO_ORIGIN, perfettoRoute } from "../src/perfetto";
import type { EvidenceSpan } from "../src/types";
import { traceUrl, traceViewerUrl } from "../src/urls";

const BASE = "http://tb.example:6006/prefix/data/plugin/advisor/";

const span: EvidenceSpan = {
  kind: "input_wait", host: "gpu0", pid: 591, tid: "591", ts_us: 4914330773149.497, dur_us: 200848.735,
  start_ns: 4914330773149497, duration_ns: 200848735, name: "next", step: 2, thread: "python3", format: "kineto",
};

describe("evidence span links", () => {
  it("asks the trace route for the run and host, relative to the tab", () => {
    const u = new URL(traceUrl("torch/run a", "gpu0"), BASE);
    expect(u.pathname).toBe("/prefix/data/plugin/advisor/trace");
    expect(u.searchParams.get("run")).toBe("torch/run a");
    expect(u.searchParams.get("host")).toBe("gpu0");
  });

  it("opens xprof's trace viewer page on the host around the span, its data URL on the same prefix", () => {
    const u = new URL(traceViewerUrl("loop/2024", "vm", 75711.617, 37966.923, BASE), BASE);
    expect(u.pathname).toBe("/prefix/data/plugin/profile/trace_viewer_index.html");
    expect(u.searchParams.get("is_streaming")).toBe("true");
    const data = new URL(u.searchParams.get("trace_data_url") ?? "", "http://tb.example:6006");
    expect(data.pathname).toBe("/prefix/data/plugin/profile/data");
    expect([data.searchParams.get("run"), data.searchParams.get("tag"), data.searchParams.get("host")])
      .toEqual(["loop/2024", "trace_viewer@", "vm"]);
    const start = Number(u.searchParams.get("view_start"));
    const end = Number(u.searchParams.get("view_end"));
    expect(start).toBeCloseTo((75711.617 - 37966.923) / 1000, 6);
    expect(end).toBeCloseTo((75711.617 + 2 * 37966.923) / 1000, 6);
    expect(start).toBeGreaterThanOrEqual(0);
  });

  it("gives Perfetto the span in its ns: selection by ts, dur, pid, tid and a view around it", () => {
    expect(PERFETTO_ORIGIN).toBe("https://ui.perfetto.dev");
    const route = perfettoRoute(span);
    expect(route.startsWith("/#!/?")).toBe(true);
    const q = new URLSearchParams(route.slice("/#!/?".length));
    expect(q.get("ts")).toBe("4914330773149497");
    expect(q.get("dur")).toBe("200848735");
    expect(q.get("pid")).toBe("591");
    expect(q.get("tid")).toBe("591");
    expect(Number(q.get("visStart"))).toBe(4914330773149497 - 200848735);
    expect(Number(q.get("visEnd"))).toBe(4914330773149497 + 2 * 200848735);
  });

  it("writes a trace time to the ns, as the trace does", () => {
    expect(formatTraceTime(4914330773149.497)).toBe("4914330773149.497 µs");
    expect(formatTraceTime(1901)).toBe("1901 µs");
    expect(formatTraceTime(null)).toBe("–");
  });
});
