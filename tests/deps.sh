#!/bin/sh
# Installs the Debian packages llmsim needs when they are missing:
# with apt-get when run as root, otherwise prints the exact command.
missing=""
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
command -v cc >/dev/null 2>&1 || missing="$missing gcc"
command -v make >/dev/null 2>&1 || missing="$missing make"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "llmsim: installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
        { echo "llmsim: apt-get install failed:$missing" >&2; exit 1; }
else
    echo "llmsim: missing packages:$missing" >&2
    echo "run:  sudo apt-get install -y$missing" >&2
    exit 1
fi
