// Number formatting for the tab: milliseconds, percents, bytes. Pure, locale-independent.

function finite(x: unknown): x is number {
  return typeof x === "number" && Number.isFinite(x);
}

function groupThousands(s: string): string {
  const [int, frac] = s.split(".");
  const neg = int.startsWith("-");
  const digits = neg ? int.slice(1) : int;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return (neg ? "-" : "") + grouped + (frac !== undefined ? "." + frac : "");
}

/** Significant digits that suit a duration: 0.042 ms, 4.25 ms, 42.5 ms, 1,234 ms. */
export function formatNumber(x: number | null | undefined): string {
  if (!finite(x)) return "–";
  const a = Math.abs(x);
  let s: string;
  if (a === 0) s = "0";
  else if (a < 1) s = x.toFixed(3);
  else if (a < 10) s = x.toFixed(2);
  else if (a < 100) s = x.toFixed(1);
  else s = x.toFixed(0);
  // trailing zeros of the decimals only: from 1e21 up toFixed writes "1.5e+300", whose zeros stay
  if (s.includes(".") && !s.includes("e")) s = s.replace(/0+$/, "").replace(/\.$/, "");
  if (s === "-0") s = "0";
  return groupThousands(s);
}

export function formatMs(x: number | null | undefined): string {
  return finite(x) ? `${formatNumber(x)} ms` : "–";
}

/** How far into a step or a trace something happens: ms below a second ("12.4 ms"), seconds from
 * there ("1.52 s"); as formatting.py's format_elapsed. */
export function formatElapsed(ms: number | null | undefined): string {
  if (!finite(ms)) return "–";
  return Math.abs(ms) >= 1000 ? `${formatNumber(ms / 1000)} s` : formatMs(ms);
}

/** Percent with a space before the sign, one decimal below 10 %: "41 %", "4.2 %", "0.3 %". */
export function formatPct(x: number | null | undefined): string {
  if (!finite(x)) return "–";
  const a = Math.abs(x);
  let s = a !== 0 && a < 10 ? x.toFixed(1) : x.toFixed(0);
  if (s.endsWith(".0")) s = s.slice(0, -2);
  if (s === "-0") s = "0";
  return `${s} %`;
}

export function formatSigned(x: number | null | undefined, fmt: (v: number) => string): string {
  if (!finite(x)) return "–";
  if (x > 0) return "+" + fmt(x);
  if (x < 0) return "-" + fmt(-x);
  return fmt(0);
}

export function formatDeltaMs(x: number | null | undefined): string {
  return formatSigned(x, formatMs);
}

export function formatDeltaPct(x: number | null | undefined): string {
  return formatSigned(x, formatPct);
}

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

export function formatBytes(x: number | null | undefined): string {
  if (!finite(x) || x < 0) return "–";
  let v = x;
  let i = 0;
  while (v >= 1024 && i < BYTE_UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v.toFixed(0) : formatNumber(v)} ${BYTE_UNITS[i]}`;
}

/** A p-value in two significant digits, as the CLI's trend and diff write it: 0.0075, 0.00065, 1.2e-05. */
export function formatPValue(x: number | null | undefined): string {
  if (!finite(x)) return "–";
  if (x === 0) return "0";
  const r = Number(x.toPrecision(2));
  if (Math.abs(r) >= 1e-4) return String(r);
  const [mantissa, exponent] = r.toExponential(1).split("e");
  const digits = exponent.replace(/^[-+]/, "").padStart(2, "0");
  return `${mantissa.replace(/\.0$/, "")}e${exponent.startsWith("-") ? "-" : "+"}${digits}`;
}

/** A time in a trace as the trace writes it (µs, to the ns): "708607.752 µs". Not rounded to a few
 * digits like a duration: it is how the span is found again in a trace viewer. */
export function formatTraceTime(us: number | null | undefined): string {
  if (!finite(us)) return "–";
  let s = us.toFixed(3);
  if (s.includes(".") && !s.includes("e")) s = s.replace(/0+$/, "").replace(/\.$/, "");
  return `${s} µs`;
}
