#!/usr/bin/env python3
"""Paired ratio of two methods in `specflash bench --json` files, run by run.

`bench --repeat N` interleaves its repetitions (repetition 1 of every method, then
repetition 2, ...), so method A's and method B's rates in one repetition met the same
machine state. This prints, for each JSON file and budget, the median of the N ratios
A / B, a 90% bootstrap interval of that median, and how many repetitions A won; with
several files, also the spread of the runs' medians. The interval resamples the
repetitions of one run only: it says nothing about the machine's state between runs,
which on a shared VM moves a run's median by more than its interval (docs/edgellm.md,
"25 paired repetitions at 0%"), so compare the runs' spread too.

Usage: scripts/paired_ratio.py A B FILE.json [FILE.json ...] [--budget 0%]
Example: scripts/paired_ratio.py edgellm chain:8 bench-out/e1.json bench-out/e2.json
"""
import argparse
import json
import random
import statistics
import sys


def repetition_rates(path, budget):
    with open(path) as f:
        data = json.load(f)
    rates = {}
    for row in data.get("rows", []):
        if budget is None or row.get("budget") == budget:
            rates[(row["method"], row["budget"])] = row["repetition_tokens_per_s"]
    return rates


def resampled_medians(values, draws=2000, seed=1):
    """The medians of `draws` bootstrap resamples of values (seeded: the same every run)."""
    rng = random.Random(seed)
    return [statistics.median(rng.choices(values, k=len(values))) for _ in range(draws)]


def bootstrap_interval(ratios, draws=2000, seed=1):
    medians = sorted(resampled_medians(ratios, draws, seed))
    return medians[int(0.05 * draws)], medians[int(0.95 * draws) - 1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", help="method in the numerator, as the bench names it (edgellm)")
    parser.add_argument("b", help="method in the denominator (chain:8)")
    parser.add_argument("files", nargs="+", help="specflash bench --json outputs")
    parser.add_argument("--budget", default=None, help="only this budget (as the JSON writes it: 0%%, 50%%, 4.9M)")
    args = parser.parse_args()

    medians_by_budget = {}
    for path in args.files:
        rates = repetition_rates(path, args.budget)
        # Every budget both methods ran at (ar runs only "resident").
        budgets = sorted(b for (m, b) in rates if m == args.a and (args.b, b) in rates)
        if not budgets:
            where = " at budget " + args.budget if args.budget else ""
            sys.exit("%s: no budget%s where both %s and %s ran" % (path, where, args.a, args.b))
        for budget in budgets:
            a, b = rates[(args.a, budget)], rates[(args.b, budget)]
            if len(a) != len(b):
                sys.exit("%s: %s and %s have %d and %d repetitions" % (path, args.a, args.b, len(a), len(b)))
            ratios = [x / y for x, y in zip(a, b) if y > 0]
            median = statistics.median(ratios)
            low, high = bootstrap_interval(ratios)
            wins = sum(r > 1 for r in ratios)
            print("%s  %s  %s / %s: paired median %.3f [90%% %.3f-%.3f], %s faster in %d of %d"
                  % (path, budget, args.a, args.b, median, low, high, args.a, wins, len(ratios)))
            medians_by_budget.setdefault(budget, []).append(median)
    for budget, medians in medians_by_budget.items():
        if len(medians) > 1:
            print("%s over %d runs: run medians %.3f-%.3f, median of them %.3f"
                  % (budget, len(medians), min(medians), max(medians), statistics.median(medians)))


if __name__ == "__main__":
    main()
