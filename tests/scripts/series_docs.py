"""series_docs.py — run documents of known series for the history tests
(history_changes.sh, publish.sh): copies of one measured run, the i-th
started i minutes after 2026-01-01T00:00Z, each result's figures scaled
to a set level with a fixed +-2 % wobble, as if measured that much faster
or slower (rates up, times down, alike: import checks them)."""
import json

WOBBLE = [0.0, 1.5, -1.0, 2.0, -2.0, 0.5, -1.5, 1.0, -0.5, 1.8, -1.8, 0.2]


def run_at(tpl, i):
    """The template's document as run i: its id, times and commit tag."""
    d = json.load(open(tpl))
    d["run_id"] = "20260101T%02d%02d00Z-%06x" % (i // 60, i % 60, i)
    d["started_at"] = "2026-01-01T%02d:%02d:00.000Z" % (i // 60, i % 60)
    d["ended_at"] = d["started_at"]
    d["tags"] = {"commit": "c%03d" % i}
    return d


def scale(r, level, i):
    """Result r's headline (GBps) at level, wobbled for run i."""
    k = level * (1 + WOBBLE[i % len(WOBBLE)] / 100) / r["metrics"]["GBps"]["value"]
    for m in r["metrics"].values():
        if m["unit"].endswith("/s"):
            m["value"] *= k
        elif m["unit"] in ("s", "ms", "us", "ns"):
            m["value"] /= k
    r["samples_s"] = [t / k for t in r["samples_s"]]
    for f in r["stats"]:
        if f not in ("n", "cv"):
            r["stats"][f] /= k
