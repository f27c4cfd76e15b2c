# validate-bands.awk: the error model (sim/decide/band.h) from `make validate`'s cases.
# Input (tab-separated): suite, case, role, family key, ratio measured / predicted (of a time;
# a rate's is predicted / measured).  Writes calib/error-bands.tsv's rows to the file `table`
# and prints how well the bands hold on cases they were not made from.
#
# The bands come from the check cases only: the fit cases are the ones constants were fitted
# to, and their errors are smaller than a new run's will be.  A family is every prefix of a key
# ("training", "training/hopper", ... "training/hopper/megatron-core/bf16/tp-pp").  With n of
# its cases' ratios sorted, its 80% band is [r(k), r(n+1-k)], k = floor(0.1 (n + 1)): a
# split-conformal interval, which holds a new exchangeable case with probability at least
# (n + 1 - 2k) / (n + 1).  A family of fewer than MIN = 9 cases has no interval of its own
# (k would be 0): with at least 2 its band is its nearest such ancestor's widened to take in
# its own cases' range (a small family whose runs sit apart from its parent's -- end-to-end
# latency beside the other serving metrics -- is not held to a band its cases already fall
# outside); with fewer a prediction in it takes the ancestor's as it is.  Coverage: each check
# case against the band of its deepest family computed without it (leave-one-out, the
# fallback as llmsim applies it); each fit case against the shipped band.
BEGIN { MIN = 9; LEVEL = 0.8 }
function parent(k,    i, j) {
    j = 0
    for (i = length(k); i > 0; i--) if (substr(k, i, 1) == "/") { j = i; break }
    return j ? substr(k, 1, j - 1) : ""
}
# the band of family f from its check cases, leaving out one case of ratio `skip` (skipping
# = 1; 0 for none): sets BLO, BHI; returns the cases it used, 0 when there are fewer than MIN.
# The family's ratios are sorted once (sorted_all); leaving one out shifts the ranks above it.
function band(f, skipping, skip,    m, g, lo, hi) {
    m = cnt[f] - (skipping ? 1 : 0)
    if (m >= MIN) return interval(f, skipping, skip)
    if (m < 2) return 0
    for (g = parent(f); g != "" && !interval(g, skipping, skip); g = parent(g)) ;
    if (g == "") return 0
    # its own range without the case left out (ranks shift past it, as in interval)
    lo = srt[f, skipping && first[f, skip] == 1 ? 2 : 1]
    hi = srt[f, skipping && first[f, skip] == cnt[f] ? cnt[f] - 1 : cnt[f]]
    if (lo < BLO) BLO = lo
    if (hi > BHI) BHI = hi
    return m
}
# band's split-conformal interval of a family of at least MIN cases; 0 when it has fewer
function interval(f, skipping, skip,    m, kk, p, a, b) {
    m = cnt[f] - (skipping ? 1 : 0)
    if (m < MIN) return 0
    kk = int((1 - LEVEL) / 2 * (m + 1) + 1e-9) # 0.1 x 10 is 0.99999... in binary
    p = skipping ? first[f, skip] : m + 1
    a = kk; b = m + 1 - kk
    BLO = srt[f, a < p ? a : a + 1]
    BHI = srt[f, b < p ? b : b + 1]
    return m
}
# every family's ratios sorted (srt), and the first rank of each value (first)
function sorted_all(    i, f, j, x, k, m) {
    for (i = 1; i <= nf; i++) {
        f = fams[i]; m = cnt[f]
        for (j = 1; j <= m; j++) srt[f, j] = val[f, j]
        # shell sort: the largest family has a few thousand cases
        for (k = int(m / 2); k > 0; k = int(k / 2))
            for (j = k + 1; j <= m; j++) {
                x = srt[f, j]
                for (jj = j; jj > k && srt[f, jj - k] > x; jj -= k) srt[f, jj] = srt[f, jj - k]
                srt[f, jj] = x
            }
        for (j = m; j >= 1; j--) first[f, srt[f, j]] = j
    }
}
# the deepest family of key k with a band (without case skip): its name, or ""
function resolve(k, skipping, skip) {
    while (k != "") {
        if (band(k, skipping, skip)) return k
        k = parent(k)
    }
    return ""
}
{
    n++; suite[n] = $1; id[n] = $2; role[n] = $3; key[n] = $4; ratio[n] = $5 + 0
    if ($3 != "check" || $4 == "?") next
    for (k = $4; k != ""; k = parent(k)) {
        if (!(k in cnt)) fams[++nf] = k
        cnt[k]++; val[k, cnt[k]] = $5 + 0
    }
}
END {
    # the table, families in byte order
    for (i = 2; i <= nf; i++) { x = fams[i]; j = i - 1; while (j > 0 && fams[j] > x) { fams[j + 1] = fams[j]; j-- }; fams[j + 1] = x }
    sorted_all()
    print "# calib/error-bands.tsv: llmsim's error model (sim/decide/band.h), written by `sh tests/validate.sh --update`" > table
    print "# from the check cases of tests/validation/training.tsv and serving.tsv (tests/validate-bands.awk)." > table
    print "# ratio = measured / predicted of a time (a rate's: predicted / measured); lo and hi are the" > table
    print "# split-conformal 80% interval of a family's ratios (the k-th smallest and largest of n, k = floor(0.1 (n + 1)))." > table
    print "# A family of 2 to 8 check cases has its nearest ancestor's interval widened to its own cases' range;" > table
    print "# a prediction takes its deepest family's row." > table
    printf "family\tcases\tlo\thi\tlevel\n" > table
    for (i = 1; i <= nf; i++)
        if ((m = band(fams[i], 0, 0)))
            printf "%s\t%d\t%.4f\t%.4f\t%.2f\n", fams[i], m, BLO, BHI, LEVEL > table
    close(table)
    # coverage, by suite and by the first level below it
    for (c = 1; c <= n; c++) {
        if (key[c] == "?") continue
        sk = role[c] == "check"
        f = resolve(key[c], sk, ratio[c])
        split(key[c], part, "/")
        g1 = part[1]; g2 = part[1] "/" part[2]
        r = role[c]
        if (!(g2 in seen2)) { seen2[g2] = 1; order[++no] = g2 }
        for (q = 1; q <= 2; q++) {
            g = q == 1 ? g1 : g2
            tot[g, r]++
            if (f == "") { none[g, r]++; continue }
            band(f, sk, ratio[c])
            if (ratio[c] >= BLO && ratio[c] <= BHI) held[g, r]++
        }
    }
    for (i = 2; i <= no; i++) { x = order[i]; j = i - 1; while (j > 0 && order[j] > x) { order[j + 1] = order[j]; j-- }; order[j + 1] = x }
    printf "\nerror bands (%s: %.0f%% bands from the check cases): how often they hold\n", table == "" ? "-" : "calib/error-bands.tsv", 100 * LEVEL
    printf "  each check case against its family's band made without it; each fit case against the shipped band\n"
    printf "  %-34s %-24s %s\n", "family", "check: held / cases", "fit: held / cases"
    last = ""
    for (i = 1; i <= no; i++) {
        split(order[i], part, "/")
        if (part[1] != last) { line(part[1]); last = part[1] }
        line("  " order[i], order[i])
    }
}
function line(name, g,    r, i, t, h) {
    if (g == "") g = name
    printf "  %-34s", name
    for (i = 1; i <= 2; i++) {
        r = i == 1 ? "check" : "fit"
        t = tot[g, r] + 0; h = held[g, r] + 0
        if (t) printf " %4d / %4d %5.1f%%%-8s", h, t, 100 * h / t, none[g, r] ? sprintf(" %d none", none[g, r]) : ""
        else printf " %-23s", "-"
    }
    printf "\n"
}
