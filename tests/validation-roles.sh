#!/bin/sh
# Checks the role column of a validation suite (tests/validation/training.tsv,
# serving.tsv: column 3 the stack or engine, column 4 the role) against the
# rule of their headers, fixed before any error was looked at: within each
# stack or engine, sort the cases by id (byte order, LC_ALL=C); the 1st,
# 4th, 7th, ... are fit, all others check.  Prints each row that breaks it
# and exits 1; exits 0 when every row keeps it.
#   sh tests/validation-roles.sh SUITE.tsv...
set -eu
status=0
for tsv in "$@"; do
    bad=$(grep -v '^#' "$tsv" | tail -n +2 | awk -F'\t' '$1 != "" { print $3 "\t" $1 "\t" $4 }' |
        LC_ALL=C sort -t '	' -k1,1 -k2,2 | awk -F'\t' '
        { i = ($1 == last) ? i + 1 : 0; last = $1
          want = (i % 3 == 0) ? "fit" : "check"
          if ($3 != want) printf "  %s (%s): role %s, the rule says %s\n", $2, $1, $3, want }')
    if [ -n "$bad" ]; then
        echo "validation-roles: $tsv: roles that break the rule of its header:" >&2
        echo "$bad" >&2
        status=1
    fi
done
exit $status
