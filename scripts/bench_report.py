#!/usr/bin/python3
"""Turns `specflash bench --json` files into one report: plots (PNG, matplotlib) and a
Markdown file with every run's table, the geometric-mean speedups per budget over flash-ar
and over chain, and how `auto` did against the best method of each row group.

Usage: scripts/bench_report.py -o docs/bench_report.md --plots docs/plots NAME=FILE.json ...
NAME labels a setting (e.g. "stories, real disk"); FILE.md beside FILE.json (the bench's
Markdown output) is embedded when it exists. The numbers are the bench's; nothing here is
typed in by hand.
"""
import argparse
import json
import math
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")  # no display: files only
import matplotlib.pyplot as plt  # noqa: E402

from paired_ratio import bootstrap_interval, resampled_medians  # noqa: E402  (this script's directory)


def twin_within_share(reps, best_median, draws=2000, seed=1):
    """How often a twin of the best method would score within 5% of the best median.

    The twin is another run of the best method, drawn by resampling its repetitions: it
    shows what the row's noise alone does to the "within 5% of the best" verdict. Optimistic:
    it is centred on the best's own median, which the pick of the highest of many medians
    has already lifted by its luck."""
    if not reps or best_median <= 0:
        return None
    return sum(m >= 0.95 * best_median for m in resampled_medians(reps, draws, seed)) / draws


def paired_ratios(row, other):
    """row's rate over other's within each interleaved repetition (a repetition other did not
    measure, at 0 tok/s, is left out)."""
    return [a / x for a, x in zip(row.get("repetition_tokens_per_s", []), other.get("repetition_tokens_per_s", []))
            if x]


BUDGET_ORDER = {"0%": 0, "25%": 1, "50%": 2, "100%": 3, "resident": 4}


def load(spec):
    name, path = spec.split("=", 1)
    with open(path) as f:
        data = json.load(f)
    md_path = os.path.splitext(path)[0] + ".md"
    md = open(md_path).read() if os.path.exists(md_path) else None
    return {"name": name, "path": path, "data": data, "md": md}


def rows_by_budget(data):
    out = {}
    for r in data["rows"]:
        if r["method"] == "ar":
            continue
        out.setdefault(r["budget"], {})[r["method"]] = r
    return dict(sorted(out.items(), key=lambda kv: BUDGET_ORDER.get(kv[0], 9)))


def slug(text):
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


def plot_setting(setting, plot_dir):
    """Three PNGs per setting; returns their paths."""
    data = setting["data"]
    budgets = rows_by_budget(data)
    methods = []
    for rows in budgets.values():
        for m in rows:
            if m not in methods:
                methods.append(m)
    base = os.path.join(plot_dir, slug(setting["name"]))
    paths = []
    emulated = (" (storage EMULATED)" if data["meta"].get("io_bandwidth_emulated") and
                "EMULATED" not in setting["name"] else "")
    colors = plt.get_cmap("tab20").colors  # 20 distinct colours: every method its own

    # tokens/s versus budget, one line per method
    fig, ax = plt.subplots(figsize=(8, 4.5))
    labels = list(budgets)
    for i, m in enumerate(methods):
        ys = [budgets[b][m]["decode_tokens_per_s"] if m in budgets[b] else math.nan for b in labels]
        style = {"linewidth": 3, "color": "black"} if m == "auto" else {"color": colors[i % len(colors)]}
        ax.plot(labels, ys, marker="o", label=m, **style)
    ax.set_yscale("log")
    ax.set_xlabel("memory budget (share of layer weights resident)")
    ax.set_ylabel("decode tokens/s (log)")
    ax.set_title(setting["name"] + emulated)
    ax.legend(fontsize=7, ncol=2, loc="best")
    fig.tight_layout()
    paths.append(base + "-tps.png")
    fig.savefig(paths[-1], dpi=90)
    plt.close(fig)

    # mean accepted length per method, grouped by budget
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / max(1, len(labels))
    for i, b in enumerate(labels):
        xs = [j + i * width for j in range(len(methods))]
        ys = [budgets[b][m]["mean_accepted"] if m in budgets[b] else 0 for m in methods]
        ax.bar(xs, ys, width=width, label=b)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(methods))])
    ax.set_xticklabels(methods, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("tokens per target pass")
    ax.set_title("accepted length: " + setting["name"])
    ax.legend(fontsize=7)
    fig.tight_layout()
    paths.append(base + "-accepted.png")
    fig.savefig(paths[-1], dpi=90)
    plt.close(fig)

    # time split per decode token at each budget (stacked: draft, I/O stall, compute)
    fig, axes = plt.subplots(1, len(labels), figsize=(4 * len(labels), 4), squeeze=False)
    for ax, b in zip(axes[0], labels):
        ms = [m for m in methods if m in budgets[b]]
        split = [budgets[b][m].get("time_split_ms_per_token", {}) for m in ms]
        bottom = [0.0] * len(ms)
        for part, color in (("draft", "tab:orange"), ("io_stall", "tab:red"), ("compute", "tab:blue")):
            vals = [s.get(part, 0) for s in split]
            ax.bar(range(len(ms)), vals, bottom=bottom, label=part, color=color)
            bottom = [x + y for x, y in zip(bottom, vals)]
        ax.set_xticks(range(len(ms)))
        ax.set_xticklabels(ms, rotation=70, ha="right", fontsize=6)
        ax.set_title(b, fontsize=9)
        ax.set_ylabel("ms per decode token")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("time split: " + setting["name"] + emulated, fontsize=9)
    fig.tight_layout()
    paths.append(base + "-split.png")
    fig.savefig(paths[-1], dpi=90)
    plt.close(fig)
    return paths


def device_pace(data):
    """For a setting with EMULATED storage, a sentence when this machine's own storage was slower
    than the emulated rate (emulation only slows reads, so such rows measure the storage), else None.
    From the bench's measured device rate (bench JSON from this commit on); for older files, from
    flash-ar's waits on I/O against the time its streamed bytes take at the emulated rate."""
    meta = data["meta"]
    rate = meta.get("io_bandwidth_bytes_per_s") or 0
    if not meta.get("io_bandwidth_emulated") or rate <= 0:
        return None
    device = meta.get("storage_device_bytes_per_s")
    if device is not None:
        streamed = [r for r in data["rows"] if r.get("device_bytes_per_s", 0) > 0]
        slow = [r for r in streamed if r["device_bytes_per_s"] < rate]
        if slow:
            return ("storage EMULATED at %.2f GB/s, but this machine's own storage delivered %.2f GB/s in these "
                    "runs (less than the emulated rate in %d of the %d streamed rows): there the reads ran at the "
                    "storage's own speed, so those rows measure it, not only the emulated device"
                    % (rate / 1e9, device / 1e9, len(slow), len(streamed)))
        return None
    for r in data["rows"]:
        if r["method"] == "flash-ar" and r["budget"] == "0%" and r.get("decode_stream_bytes"):
            emulated_io = r["decode_stream_bytes"] / rate
            stall = r.get("decode_io_stall_seconds", 0)
            # Where the emulation holds, flash-ar waits at most that long (less what compute overlaps).
            if stall > 1.1 * emulated_io:
                return ("storage EMULATED at %.2f GB/s, but flash-ar at 0%% waited %.2f s on I/O where its streamed "
                        "bytes take %.2f s at that rate: this machine's own storage was slower (all or part of the "
                        "time) and set the pace there, so these rows measure it%s, not only the emulated device "
                        "(this file predates the bench's own device-rate check)"
                        % (rate / 1e9, stall, emulated_io, "" if stall > 2 * emulated_io else " in part"))
    return None


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--plots", required=True)
    ap.add_argument("--chain", default="chain:4", help="the chain baseline for the second speedup")
    ap.add_argument("--real-acceptance", default="stories", help="settings whose name contains this have real acceptance")
    ap.add_argument("--note", action="append", default=[], help="a paragraph for the report's caveats (repeatable)")
    ap.add_argument("settings", nargs="+")
    args = ap.parse_args()
    settings = [load(s) for s in args.settings]
    os.makedirs(args.plots, exist_ok=True)

    out = ["# One benchmark, every method", ""]
    out.append("Generated by `scripts/bench_report.py` from the `specflash bench --json` files below "
               "(`scripts/bench_all.sh` runs them). Every number is the bench's own. Rows whose storage "
               "is EMULATED say so in their setting's header; only the settings named *%s* have real "
               "acceptance (the synthetic models have random weights: their rows measure cost only)."
               % args.real_acceptance)
    out.append("")
    for s in settings:
        s["device_pace"] = device_pace(s["data"])
    paced = ["%s: %s." % (s["name"], s["device_pace"]) for s in settings if s["device_pace"]]
    if args.note or paced:
        out += ["## Caveats", ""] + ["- " + n for n in args.note + paced] + [""]

    # auto against the best method of each (setting, budget)
    # Paired: the repetitions are interleaved (repetition k of every method runs in the same
    # stretch of time), so auto's rate over the best method's within each repetition is far
    # less noisy than the ratio of two medians on a machine whose speed drifts.
    out += ["## `auto` against the best method of every row group", "",
            "best method: the highest median of the other methods (auto's variants excluded). paired: auto / best "
            "within each interleaved repetition, their median with a 90% bootstrap interval of it "
            "(scripts/paired_ratio.py), and in how many repetitions auto was within 5% of the best or faster. "
            "The interval resamples this run's repetitions only; and the best method is the top of many noisy "
            "medians, so it is picked partly for its luck, which pulls every auto / best down. auto keeps what "
            "it learnt from one repetition of a row to the next (its profile); auto-cold starts afresh in every "
            "repetition, as a first run on a new machine or model does.", "",
            "| setting | budget | best method | best tok/s | auto tok/s | auto / best | paired median [90%] | "
            "paired >= 0.95 | auto = AR | auto-cold / best | auto's cycles per policy |",
            "|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|"]
    worst = None
    # Rows; within 5% by medians, by paired medians; whose whole paired interval is below 0.95.
    n_rows = by_medians = by_paired = behind = 0
    # The best method's twin (twin_within_share): rows it would be within 5% in, expected, and
    # the chance that it would be in every row.
    twin_n, twin_rows, twin_every = 0, 0.0, 1.0
    # auto against flash-ar itself (the issue's "never slower than flash-ar by more than
    # noise"): rows compared, and those whose whole paired interval is below 1.
    vs_flash_ar_n, slower_than_flash_ar = 0, []
    for s in settings:
        for b, rows in rows_by_budget(s["data"]).items():
            if "auto" not in rows:
                continue
            # The best other method: auto's variants (auto-cold, auto:P) are not competitors.
            best_m = max((m for m in rows if not m.startswith("auto")), key=lambda m: rows[m]["decode_tokens_per_s"])
            best = rows[best_m]["decode_tokens_per_s"]
            auto = rows["auto"]["decode_tokens_per_s"]
            ratio = auto / best if best else 0
            worst = ratio if worst is None else min(worst, ratio)
            eq = "%d/%d" % (rows["auto"]["equal_to_ar"], rows["auto"]["compared_to_ar"])
            pairs = paired_ratios(rows["auto"], rows[best_m])
            n_rows += 1
            by_medians += ratio >= 0.95
            twin = twin_within_share(rows[best_m].get("repetition_tokens_per_s", []), best)
            if twin is not None:
                twin_n += 1
                twin_rows += twin
                twin_every *= twin
            paired, within = "-", "-"
            if pairs:
                median = statistics.median(pairs)
                low, high = bootstrap_interval(pairs)
                by_paired += median >= 0.95
                behind += high < 0.95
                paired = "%.2f [%.2f-%.2f]" % (median, low, high)
                within = "%d/%d" % (sum(p >= 0.95 for p in pairs), len(pairs))
            flash_ar_pairs = paired_ratios(rows["auto"], rows.get("flash-ar", {}))
            if flash_ar_pairs:
                vs_flash_ar_n += 1
                low, high = bootstrap_interval(flash_ar_pairs)
                if high < 1.0:
                    slower_than_flash_ar.append("%s %s: %.2f [%.2f-%.2f]" % (
                        s["name"], b, statistics.median(flash_ar_pairs), low, high))
            # Which arms auto ran in its median repetition (bench JSON from 1077811 on).
            policies = ", ".join("%s %d" % (p["policy"], p["cycles"])
                                 for p in sorted(rows["auto"].get("auto_policies", []), key=lambda p: -p["cycles"]))
            cold = ("%.2f" % (rows["auto-cold"]["decode_tokens_per_s"] / best)) if "auto-cold" in rows and best else "-"
            out.append("| %s | %s | %s | %.2f | %.2f | %.2f | %s | %s | %s | %s | %s |"
                       % (s["name"], b, best_m, best, auto, ratio, paired, within, eq, cold, policies or "-"))
    if worst is not None:
        out += ["", "Worst auto / best over these rows: **%.2f**. auto within 5%% of the best or faster: %d of %d "
                "rows by medians, %d by paired medians. In %d of the %d rows the whole paired 90%% interval is below "
                "0.95 (auto more than 5%% behind beyond this run's noise); in the others this run cannot tell auto "
                "from within 5%% of the best (for a row of 3 repetitions the interval spans nearly all of them "
                "and says little)."
                % (worst, by_medians, n_rows, by_paired, behind, n_rows)]
    if twin_n:
        out += ["", "What the noise alone allows: a twin of each row's best method (another run of it, drawn by "
                "resampling its repetitions, and centred on its own median, which is optimistic) would be within 5%% "
                "of the best median in %.1f of the %d rows (expected), and in every row with probability %.2f."
                % (twin_rows, twin_n, twin_every)]
    if vs_flash_ar_n:
        out += ["", "Against flash-ar itself (paired, as above): auto is slower beyond this run's noise (the whole "
                "90%% interval of auto / flash-ar below 1) in %d of the %d rows%s"
                % (len(slower_than_flash_ar), vs_flash_ar_n,
                   (": " + "; ".join(slower_than_flash_ar) + ".") if slower_than_flash_ar else ".")]
    out.append("")

    # geometric-mean speedups per budget, per method: settings with real acceptance, then all
    def geomean_table(chosen, title):
        per = {}
        for s in chosen:
            for b, rows in rows_by_budget(s["data"]).items():
                base = rows.get("flash-ar")
                chain = rows.get(args.chain)
                for m, r in rows.items():
                    d = per.setdefault((m, b), {"ar": [], "chain": []})
                    if base:
                        d["ar"].append(r["decode_tokens_per_s"] / base["decode_tokens_per_s"])
                    if chain:
                        d["chain"].append(r["decode_tokens_per_s"] / chain["decode_tokens_per_s"])
        budgets = sorted({b for (_, b) in per}, key=lambda b: BUDGET_ORDER.get(b, 9))
        lines = ["### " + title, "",
                 "| method | " + " | ".join("%s vs flash-ar | %s vs %s" % (b, b, args.chain) for b in budgets) + " |",
                 "|---|" + "--:|--:|" * len(budgets)]
        methods = []
        for (m, _) in per:
            if m not in methods:
                methods.append(m)
        for m in methods:
            cells = []
            for b in budgets:
                d = per.get((m, b))
                ga = geomean(d["ar"]) if d else None
                gc = geomean(d["chain"]) if d else None
                cells.append("%s | %s" % ("%.2fx" % ga if ga else "-", "%.2fx" % gc if gc else "-"))
            lines.append("| %s | %s |" % (m, " | ".join(cells)))
        return lines + [""]

    out += ["## Geometric-mean speedups per budget", "",
            "Over the settings that ran the method at that budget. A method missing from a setting "
            "is averaged over fewer settings.", ""]
    real = [s for s in settings if args.real_acceptance in s["name"]]
    if real:
        out += geomean_table(real, "Settings with real acceptance (%s)" % ", ".join(s["name"] for s in real))
    if len(real) < len(settings):
        out += geomean_table(settings, "All settings (the cost-only ones included)")

    for s in settings:
        out += ["## " + s["name"], ""]
        meta = s["data"]["meta"]
        out.append("- file: `%s`; commit %s; %s" % (s["path"], meta.get("commit"), meta.get("date")))
        if s["device_pace"]:
            out.append("- **%s.**" % s["device_pace"])
        for p in plot_setting(s, args.plots):
            rel = os.path.relpath(p, os.path.dirname(os.path.abspath(args.output)))
            out.append("")
            out.append("![%s](%s)" % (os.path.basename(p), rel))
        out.append("")
        if s["md"]:
            out.append(s["md"].replace("## specflash bench", "#### the bench's report"))
        out.append("")
    with open(args.output, "w") as f:
        f.write("\n".join(out) + "\n")
    print("wrote %s and %d plots in %s" % (args.output, 3 * len(settings), args.plots), file=sys.stderr)


if __name__ == "__main__":
    main()
