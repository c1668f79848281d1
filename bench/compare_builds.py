"""Summarises bench/compare-builds.sh's runs: every row of mpidht_bench with
the median and range of keys/s over the repeats for both builds, the ratio
of the medians (after/before) and the worst pair (the slowest after-run
against the fastest before-run), worst ratio first."""

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rows import read_rows  # noqa: E402

Row = tuple[int, str, str, int]


def load(raw: Path) -> dict[Row, dict[str, list[dict[str, float]]]]:
    rows: dict[Row, dict[str, list[dict[str, float]]]] = {}
    for path in sorted(raw.glob("*-np*-r*.json")):
        which = path.name.split("-")[0]
        for r in read_rows(path):
            key = (r["ranks"], r["protocol"], r["phase"], r["batch"])
            rows.setdefault(key, {}).setdefault(which, []).append(r)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("raw", type=Path, help="folder of <before|after>-np<N>-r<R>.json")
    args = parser.parse_args()
    rows = load(args.raw)
    if not rows:
        parser.error(f"no runs (<before|after>-np<N>-r<R>.json) in {args.raw}")
    lines: list[tuple[float, Row, list[float], list[float], float, tuple[float, float]]] = []
    for key, runs in rows.items():
        before, after = runs.get("before", []), runs.get("after", [])
        if not before or not after:
            continue
        b = [r["ops_per_s"] / 1e6 for r in before]
        a = [r["ops_per_s"] / 1e6 for r in after]
        ratio = statistics.median(a) / statistics.median(b)
        worst = min(a) / max(b)
        p50 = (statistics.median(r["p50_us"] for r in before),
               statistics.median(r["p50_us"] for r in after))
        lines.append((ratio, key, b, a, worst, p50))
    lines.sort(key=lambda line: line[0])
    print("| ratio after/before (worst pair) | ranks | protocol | phase | batch "
          "| before M keys/s: median (min-max) | after | p50 µs before → after |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for ratio, (ranks, protocol, phase, batch), b, a, worst, (p0, p1) in lines:
        print(f"| {ratio:.2f}× ({worst:.2f}×) | {ranks} | {protocol} | {phase} | {batch} "
              f"| {statistics.median(b):.2f} ({min(b):.2f}–{max(b):.2f}) "
              f"| {statistics.median(a):.2f} ({min(a):.2f}–{max(a):.2f}) "
              f"| {p0:.3f} → {p1:.3f} |")
    print(f"\n{len(lines)} rows; repeats per build: "
          f"{min(len(r.get('after', [])) for r in rows.values())}")


if __name__ == "__main__":
    main()
