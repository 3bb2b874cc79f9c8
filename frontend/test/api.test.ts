import { describe, expect, it } from "vitest";
import { CANCELLED, errorMessage, getJson, pollDelay, type FetchLike } from "../src/api";

function fakeFetch(answers: { status: number; body: string }[]): FetchLike & { urls: string[] } {
  const urls: string[] = [];
  const fn = (async (url: string) => {
    urls.push(url);
    const a = answers.shift();
    if (!a) throw new Error("no more answers");
    return { status: a.status, text: async () => a.body };
  }) as FetchLike & { urls: string[] };
  fn.urls = urls;
  return fn;
}

const noSleep = async () => {};

describe("getJson", () => {
  it("polls while the server answers 202 and reports progress", async () => {
    const f = fakeFetch([
      { status: 202, body: '{"status":"running","run":"r"}' },
      { status: 202, body: '{"status":"running","run":"r"}' },
      { status: 200, body: '{"run":"r"}' },
    ]);
    let clock = 0;
    const pending: number[] = [];
    const slept: number[] = [];
    const res = await getJson<{ run: string }>("report?run=r", {
      fetchFn: f,
      now: () => clock,
      sleep: async (ms) => {
        slept.push(ms);
        clock += ms;
      },
      onPending: (ms) => pending.push(ms),
    });
    expect(res).toEqual({ ok: true, data: { run: "r" } });
    expect(f.urls).toEqual(["report?run=r", "report?run=r", "report?run=r"]);
    expect(slept).toEqual([500, 1000]);
    expect(pending).toEqual([0, 500]);
  });

  it("passes on the server's JSON error message with the status", async () => {
    const res = await getJson("report?run=x", {
      fetchFn: fakeFetch([{ status: 404, body: '{"error": "unknown run \'x\'"}' }]),
      sleep: noSleep,
    });
    expect(res).toEqual({ ok: false, status: 404, error: "unknown run 'x'" });
  });

  it("explains non-JSON failures and network errors", async () => {
    const res = await getJson("runs", { fetchFn: fakeFetch([{ status: 500, body: "<html>\n Internal   Error</html>" }]), sleep: noSleep });
    expect(res).toEqual({ ok: false, status: 500, error: "The server answered HTTP 500: <html> Internal Error</html>" });
    const net = await getJson("runs", { fetchFn: fakeFetch([]), sleep: noSleep });
    expect(net.ok).toBe(false);
    if (!net.ok) expect(net.error).toMatch(/^Could not reach the TensorBoard server/);
    const bad = await getJson("runs", { fetchFn: fakeFetch([{ status: 200, body: "{not json" }]), sleep: noSleep });
    expect(bad.ok).toBe(false);
  });

  it("gives up after the timeout", async () => {
    let clock = 0;
    const answers = Array.from({ length: 20 }, () => ({ status: 202, body: "{}" }));
    const res = await getJson("report?run=r", {
      fetchFn: fakeFetch(answers),
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
      timeoutMs: 5000,
    });
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.error).toMatch(/still running after 5 s/);
  });

  it("stops when cancelled", async () => {
    let cancelled = false;
    const f = fakeFetch([{ status: 202, body: "{}" }, { status: 200, body: "{}" }]);
    const res = await getJson("report?run=r", {
      fetchFn: f,
      sleep: async () => {
        cancelled = true;
      },
      cancelled: () => cancelled,
    });
    expect(res).toEqual({ ok: false, status: 0, error: CANCELLED });
    expect(f.urls).toHaveLength(1);
  });
});

describe("helpers", () => {
  it("backs off to 2 s", () => {
    expect([0, 1, 2, 3, 10].map(pollDelay)).toEqual([500, 1000, 1500, 2000, 2000]);
  });
  it("ignores an empty error field", () => {
    expect(errorMessage(400, '{"error": ""}')).toBe('The server answered HTTP 400: {"error": ""}');
    expect(errorMessage(502, "")).toBe("The server answered HTTP 502");
  });
});
