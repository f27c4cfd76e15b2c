# Sourced by the calib/fit-*.sh scripts (POSIX sh has no include): with
# $tsv (the table the script fits) and $cases (the validation suite it fits
# to) set, checks that it runs from the repository root after make, and
# makes $work (removed on exit) with $data, a data directory that is this
# one but for its own copy of $tsv, which the script then edits.
L=${LLMSIM:-./llmsim}
[ -x "$L" ] && [ -f "$tsv" ] && [ -f "$cases" ] || {
    echo "$0: run from the repository root after make" >&2
    exit 2
}
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
data=$work/data
mkdir -p "$data/calib"
for f in *; do
    [ "$f" = calib ] || ln -s "$PWD/$f" "$data/$f"
done
for f in calib/*; do
    [ "$f" = "$tsv" ] || ln -s "$PWD/$f" "$data/$f"
done
cp "$tsv" "$data/$tsv"
