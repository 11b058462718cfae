#!/usr/bin/python3
"""scripts/bench_report.py on a small made-up bench JSON: auto's row-by-row verdicts.

Two budgets, each with flash-ar, lever and auto over 9 interleaved repetitions: at 0% auto
runs within noise of lever (its paired ratios straddle 0.95); at 25% it is 20% behind in
every repetition. The report must name the best method, give the paired median with its
bootstrap interval, and count the rows: 1 of 2 within 5% by medians, 1 by paired medians,
and 1 row behind beyond noise. And an EMULATED setting whose storage was slower than the
emulated rate gets a caveat. And a twin of each row's best method (its repetitions
resampled) is scored as auto is. Run: /usr/bin/python3 tests/scripts/bench_report_test.py
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def row(method, budget, reps):
    median = sorted(reps)[len(reps) // 2]
    return {"method": method, "budget": budget, "decode_tokens_per_s": median, "repetition_tokens_per_s": reps,
            "mean_accepted": 1.0 if method == "flash-ar" else 4.0, "equal_to_ar": 2, "compared_to_ar": 2,
            "time_split_ms_per_token": {"draft": 0.1, "io_stall": 0.5, "compute": 0.4},
            "auto_policies": [{"policy": "lever", "cycles": 40}] if method == "auto" else []}


class BenchReportTest(unittest.TestCase):
    def report_over(self, settings):
        """The report over made-up bench runs, (name, JSON data) each, and how many plots it drew."""
        with tempfile.TemporaryDirectory() as tmp:
            args = []
            for name, data in settings:
                path = os.path.join(tmp, name.replace(" ", "_") + ".json")
                with open(path, "w") as f:
                    json.dump(data, f)
                args.append(name + "=" + path)
            report = os.path.join(tmp, "report.md")
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench_report.py"), "-o", report,
                            "--plots", os.path.join(tmp, "plots")] + args, check=True, stderr=subprocess.DEVNULL)
            return open(report).read(), len(os.listdir(os.path.join(tmp, "plots")))

    def run_report(self, rows):
        """The report over one made-up bench run of these rows, and how many plots it drew."""
        return self.report_over([("made up", {"meta": {"commit": "test", "date": "today"}, "rows": rows})])

    def test_auto_rows_are_counted_with_their_noise(self):
        lever = [100, 104, 96, 102, 98, 101, 99, 103, 97]
        within_noise = [x * f for x, f in zip(lever, [0.90, 1.02, 0.97, 0.95, 1.01, 0.96, 0.92, 0.99, 0.94])]
        text, plots = self.run_report([
            row("flash-ar", "0%", [50] * 9), row("lever", "0%", lever), row("auto", "0%", within_noise),
            row("flash-ar", "25%", [60] * 9), row("lever", "25%", lever), row("auto", "25%", [x * 0.8 for x in lever])])
        self.assertEqual(plots, 3)
        auto_rows = [line for line in text.splitlines() if line.startswith("| made up |")]
        self.assertEqual(len(auto_rows), 2)
        cells = [c.strip() for c in auto_rows[0].split("|")[1:-1]]
        self.assertEqual(cells[2], "lever")
        median, interval = cells[6].split(" ")
        low, high = (float(x) for x in interval.strip("[]").split("-"))
        self.assertAlmostEqual(float(median), 0.96, places=2)
        self.assertLess(low, 0.95)
        self.assertGreaterEqual(high, 0.95)
        cells = [c.strip() for c in auto_rows[1].split("|")[1:-1]]
        self.assertEqual(cells[6], "0.80 [0.80-0.80]")
        self.assertEqual(cells[7], "0/9")
        self.assertIn("within 5% of the best or faster: 1 of 2 rows by medians, 1 by paired medians. In 1 of the 2 "
                      "rows the whole paired 90% interval is below 0.95", text)
        # lever's repetitions never fall 5% below their median: its twin is within 5% in both rows.
        self.assertIn("would be within 5% of the best median in 2.0 of the 2 rows (expected), and in every row with "
                      "probability 1.00.", text)

    def test_rows_where_auto_is_slower_than_flash_ar_beyond_noise_are_named(self):
        flash_ar = [100, 104, 96, 102, 98, 101, 99, 103, 97]
        text, _ = self.run_report([
            # Resident: auto a steady 3% behind flash-ar, the best method there.
            row("flash-ar", "100%", flash_ar), row("auto", "100%", [x * 0.97 for x in flash_ar]),
            # Streamed: auto 2x flash-ar.
            row("flash-ar", "0%", [50] * 9), row("auto", "0%", [100] * 9)])
        self.assertIn("Against flash-ar itself (paired, as above): auto is slower beyond this run's noise (the whole "
                      "90% interval of auto / flash-ar below 1) in 1 of the 2 rows: made up 100%: 0.97 [0.97-0.97].",
                      text)
        text, _ = self.run_report([row("flash-ar", "0%", [50] * 9), row("auto", "0%", [100] * 9)])
        self.assertIn("in 0 of the 1 rows.", text)

    def test_the_twin_of_the_best_method_resamples_its_repetitions(self):
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        from bench_report import twin_within_share
        # A resampled median of 3 is >= 95 when at least 2 of the 3 draws are 100 or 120: 20/27.
        self.assertAlmostEqual(twin_within_share([80, 100, 120], 100), 20 / 27, delta=0.03)
        self.assertEqual(twin_within_share([96, 100, 104], 100), 1.0)
        self.assertIsNone(twin_within_share([], 100))

    def test_emulation_slower_than_the_storage_is_a_caveat(self):
        """An EMULATED setting whose storage delivered less than the emulated rate in some rows
        is named in the caveats and its own section; one whose storage kept up is not."""
        def setting(device_rates):
            rows = [dict(row("flash-ar", b, [50] * 3), device_bytes_per_s=d) for b, d in device_rates]
            return {"meta": {"commit": "test", "date": "today", "io_bandwidth_emulated": True,
                             "io_bandwidth_bytes_per_s": 4e9, "storage_device_bytes_per_s": 2e9}, "rows": rows}
        text, _ = self.report_over([("too fast", setting([("0%", 1e9), ("25%", 5e9)])),
                                    ("kept up", setting([("0%", 5e9), ("25%", 6e9)]))])
        self.assertIn("- too fast: storage EMULATED at 4.00 GB/s, but this machine's own storage delivered 2.00 GB/s "
                      "in these runs (less than the emulated rate in 1 of the 2 streamed rows)", text)
        self.assertEqual(text.count("own storage delivered"), 2, "the caveat and the setting's own section")
        self.assertNotIn("- kept up: storage", text)


if __name__ == "__main__":
    unittest.main()
