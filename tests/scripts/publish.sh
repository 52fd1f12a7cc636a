#!/usr/bin/env bash
# publish.sh — `solbench publish DIR` on a store of known series: one run
# measured here (memory.read and memory.triad) is the template, and copies
# with set headline figures are imported in time order, as
# history_changes.sh builds them: memory.read 14 runs near 100 GB/s then
# 10 near 90 (a 10 % regression at the 15th run, within the last 10),
# memory.triad 6 near 50 then 18 near 60 (an improvement at the 7th, older
# than the last 10). One run's commit is `<b>&"`, and a trace is stored.
#   the files: index.html, style.css, one page per series, linked from the
#     index; the read page's SVG has the change-point line and its label,
#     the index its red marker (the triad's change point only counted); the commit escaped everywhere, never raw;
#     a second publication over the first works;
#   headless Chromium: the DOM of the index and of the page hold the
#     sparklines, the plot, its points and the change-point marker;
#     screenshots kept with KEEP=1;
#   bad input: one line on stderr, exit 2.
# Usage: publish.sh path/to/solbench
sb=${1:?usage: publish.sh path/to/solbench}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/expect.sh"
[ -n "${KEEP:-}" ] && trap 'echo "kept $T"' EXIT

export SOLBENCH_DB=$T/t.db HOME=$T
nb=$(printf '\302\240') # the no-break space between a figure and its %
"$sb" run --quiet --bench memory.read,memory.triad -p size=64KiB \
    --min-time 0.01 --repeat 3 >/dev/null 2>&1 || { bad "the template run"; exit 1; }
"$sb" export last --json "$T/one.json" >/dev/null || { bad "export"; exit 1; }

python3 - "$T/one.json" "$T/docs" "$here" <<'PY' || { bad "making the runs"; exit 1; }
import json, os, sys
tpl, out, here = sys.argv[1:4]
sys.path.insert(0, here)
from series_docs import run_at, scale
os.makedirs(out, exist_ok=True)
levels = {"memory.read": [100.0] * 14 + [90.0] * 10,
          "memory.triad": [50.0] * 6 + [60.0] * 18}
for i in range(24):
    d = run_at(tpl, i)
    if i == 5:
        d["tags"] = {"commit": '<b>&"'}
    for r in d["results"]:
        scale(r, levels[r["bench"]][i], i)
        # judged steady with samples 3 % apart, but run 6 noisy (30 %)
        sp, m = 0.15 if i == 5 else 0.015, len(r["samples_s"])
        r["samples_s"] = [r["stats"]["p50"] * (1 + sp * (2 * j / max(m - 1, 1) - 1))
                          for j in range(m)]
        r["stable"], r["stability"] = i != 5, [] if i != 5 else ["cv 15% (> 10%)"]
    json.dump(d, open(os.path.join(out, "%03d.json" % i), "w"))
PY
"$sb" import --db "$T/s.db" "$T"/docs/*.json >/dev/null || { bad "import"; exit 1; }
"$sb" trace import "$here/../data/trace/kineto_gpu_small.json" --name kineto-small \
    --db "$T/s.db" >/dev/null || bad "trace import"

# ---- the site
expect 0 '^published 3 pages to .*: 2 series, 2 change points, 1 trace' -- \
    "$sb" publish "$T/site" --db "$T/s.db"
site=$T/site
for f in index.html style.css; do
    [ -s "$site/$f" ] && ok "$f written" || bad "no $f"
done
ls "$site"/p-*.html >/dev/null 2>&1 && [ "$(ls "$site"/p-*.html | wc -l)" -eq 2 ] &&
    ok "two series pages" || bad "series pages: $(ls "$site")"
ls -a "$site" | grep -q '\.tmp$' && bad "a temporary file left" || ok "no temporary file left"
# the memory.read page: the one the index's read row links to
read_page=$(grep -o '<a href="p-[0-9a-f]\{16\}\.html">memory\.read</a>' "$site/index.html" |
    sed 's/.*href="\([^"]*\)".*/\1/')
if [ -n "$read_page" ] && [ -s "$site/$read_page" ]; then
    ok "the index links to the memory.read page ($read_page)"
else
    bad "no link from the index to the memory.read page"; read_page=none
fi
page=$site/$read_page
grep -q '<svg class="timeline"' "$page" && [ "$(grep -c '<circle class="pt' "$page")" -ge 24 ] &&
    ok "the page's timeline has its 24 points" || bad "no timeline with 24 points"
grep -q '<line class="cp bad"' "$page" && grep -q "<text class=\"bad\"[^>]*>−1[0-9]\.[0-9]$nb%</text>" "$page" &&
    ok "the change-point line and its label" || bad "no change-point marker on the page"
grep -q 'class="band"' "$page" && grep -q 'p10–p90 of the samples' "$page" &&
    ok "the p10–p90 band and its legend" || bad "no p10–p90 band"
# run 6's samples spread ±15 % in time: its GB/s from p50/p90 to p50/p10
# of the figure (about 0.89 to 1.14 of it), the others' about ±1 %
python3 - "$page" <<'PY' && ok "run 6's p10–p90 is its samples' spread" || bad "run 6's p10–p90 band"
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
rows = dict((int(r[0]), (float(r[1]), float(r[2]), float(r[3])))
            for r in re.findall(r'<tr><td class="n">(\d+)<td>.*?<td class="n">([\d.]+)<td class="n">([\d.]+)–([\d.]+)<', html))
v, lo, hi = rows[6]
assert 0.87 < lo / v < 0.91 and 1.11 < hi / v < 1.17, rows[6]
v, lo, hi = rows[7]
assert 0.97 < lo / v < 1 and 1 < hi / v < 1.03, rows[7]
PY
grep -q 'before run 15 (20260101T0014' "$page" && ok "the change point is before run 15" ||
    bad "the change point is not before run 15"
grep -q "class=\"bad\"[^>]*>▼ −1[0-9]\.[0-9]$nb% at run 15</a>" "$site/index.html" &&
    ok "the index marks the regression at run 15 in red" || bad "no regression marker on the index"
grep -q '<span class="m">1 earlier</span>' "$site/index.html" &&
    ok "the triad's older improvement counted, not marked" || bad "the triad's older change point"
grep -q 'svg class="spark"' "$site/index.html" && ok "sparklines" || bad "no sparkline"
grep -q 'kineto-small' "$site/index.html" && ok "the trace is listed" || bad "the trace is not listed"
grep -q 'rel="stylesheet" href="style.css"' "$page" && ! grep -qE '(src|href)="(https?:)?//' "$site"/*.html &&
    ok "one local style sheet, nothing fetched from elsewhere" || bad "an external reference"
# the commit <b>&" is escaped wherever it is shown, never raw
if grep -q '&lt;b&gt;&amp;&quot;' "$page" && ! grep -qF '<b>&"' "$site"/*.html; then
    ok "the commit <b>&\" escaped, never raw"
else
    bad "the commit <b>&\" raw or missing"
fi
# a second publication replaces the pages
expect 0 '^published 3 pages' -- "$sb" publish "$site" --db "$T/s.db"
expect 0 '^published 2 pages to .*: 1 series, 1 change point' -- \
    "$sb" publish "$T/site2" --db "$T/s.db" --bench memory.read
expect 0 ': 0 series' -- "$sb" publish "$T/site3" --db "$T/s.db" --since 2027-01-01

# ---- bad input: one line, exit 2
touch "$T/file"
expect 2 'no folder given' -- "$sb" publish --db "$T/s.db"
expect 2 'not a folder' -- "$sb" publish "$T/file" --db "$T/s.db"
expect 2 "unknown option '--bogus'" -- "$sb" publish "$T/x" --bogus --db "$T/s.db"
expect 2 'last' -- "$sb" publish "$T/x" --last -3 --db "$T/s.db"
expect 2 'last' -- "$sb" publish "$T/x" --last many --db "$T/s.db"
expect 2 'since' -- "$sb" publish "$T/x" --since yesterday --db "$T/s.db"
"$sb" publish "$T/file" --db "$T/s.db" 2>"$T/err" >/dev/null
[ "$(wc -l <"$T/err")" -eq 1 ] && ok "one line on stderr" || bad "stderr: $(cat "$T/err")"

# ---- in a browser
BROWSER=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$BROWSER" ]; then
    bad "chromium not found (scripts/install-deps.sh installs it)"
    exit 1
fi
chrome() { timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size=1400,1000 "$@" 2>/dev/null; }
chrome --dump-dom "file://$site/index.html" >"$T/index.dom"
chrome --dump-dom "file://$page" >"$T/page.dom"
[ "$(grep -c '<svg class="spark"' "$T/index.dom")" -eq 2 ] && grep -qE "▼ −1[0-9]\.[0-9]($nb|&nbsp;)% at run 15" "$T/index.dom" &&
    ok "browser: the index's sparklines and marker" || bad "browser: the index lacks its sparklines or marker"
grep -q '<svg class="timeline"' "$T/page.dom" && grep -q '<line class="cp bad"' "$T/page.dom" &&
    [ "$(grep -c '<circle class="pt' "$T/page.dom")" -ge 24 ] &&
    ok "browser: the page's plot, points and change-point line" || bad "browser: the page lacks its plot"
if grep -qF '&lt;b&gt;&amp;' "$T/page.dom" && ! grep -qF '<b>&' "$T/page.dom"; then
    ok "browser: the commit is text, not markup"
else
    bad "browser: the commit became markup"
fi
chrome --screenshot="$T/index.png" "file://$site/index.html" >/dev/null
chrome --screenshot="$T/page.png" "file://$page" >/dev/null
[ -s "$T/index.png" ] && [ -s "$T/page.png" ] && ok "screenshots (KEEP=1 keeps them in $T)" ||
    bad "no screenshot"
exit $fail
