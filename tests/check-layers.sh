#!/bin/sh
# make check-layers: the folders of sim/ are layers (docs/how-it-works.md),
# and a file may include only its own layer's headers and those of the
# layers above it in this list.  train and serve are siblings: neither
# includes the other.  libconfig stays in cfg and cli (configuration at the
# edge), jansson in report, cfg (Hugging Face config.json) and cli; and
# no layer below report prints.
# Prints every offending line; exits 1 if there is one.
cd "$(dirname "$0")/.." || exit 1
order="base engine hw coll model cost mem train serve decide report cfg cli"
rank() {
    i=0
    for l in $order; do
        [ "$l" = "$1" ] && { [ "$l" = serve ] && echo 7 || echo $i; return; }
        i=$((i + 1))
    done
    echo -1
}
bad=0
for f in sim/*/*.[ch]; do
    layer=${f#sim/}
    layer=${layer%%/*}
    me=$(rank "$layer")
    if [ "$me" -lt 0 ]; then
        echo "$f: folder \"$layer\" is not a layer ($order)"
        bad=1
        continue
    fi
    grep -n '^[[:space:]]*#[[:space:]]*include' "$f" | while IFS= read -r line; do
        n=${line%%:*}
        inc=$(echo "$line" | sed -n 's/.*#[[:space:]]*include[[:space:]]*\([<"][^>"]*[>"]\).*/\1/p')
        case "$inc" in
        '<libconfig.h>')
            case "$layer" in cfg | cli) ;; *) echo "$f:$n: libconfig outside cfg and cli" ;; esac ;;
        '<jansson.h>')
            case "$layer" in report | cfg | cli) ;; *) echo "$f:$n: jansson outside report, cfg and cli" ;; esac ;;
        '"'*/*'"')
            dep=${inc#\"}
            dep=${dep%%/*}
            r=$(rank "$dep")
            if [ "$r" -lt 0 ]; then
                echo "$f:$n: $inc: no such layer"
            elif [ "$r" -gt "$me" ] || { [ "$r" -eq "$me" ] && [ "$dep" != "$layer" ]; }; then
                echo "$f:$n: $layer includes $inc, a layer below it"
            fi ;;
        '"'*'"')
            echo "$f:$n: $inc: name its layer (\"$layer/...\")" ;;
        esac
    done
done >/tmp/check-layers.$$
# the simulation and the decisions never print: what they found goes up as
# results (report/ renders it); base/check.c's invariant failure is the
# one message a layer below writes itself, as an assert would
for f in sim/base/*.c sim/engine/*.c sim/hw/*.c sim/coll/*.c sim/model/*.c \
         sim/cost/*.c sim/mem/*.c sim/train/*.c sim/serve/*.c sim/decide/*.c; do
    [ "$f" = sim/base/check.c ] && continue
    grep -nE '(^|[^a-z_])(printf|fprintf|vfprintf|puts|fputs|fputc|putchar|fwrite)\(' "$f" |
        sed "s|^|$f:|; s|\$| (prints below report)|"
done >>/tmp/check-layers.$$
if [ -s /tmp/check-layers.$$ ]; then
    cat /tmp/check-layers.$$
    bad=1
fi
rm -f /tmp/check-layers.$$
[ $bad -eq 0 ] && echo "check-layers: $(ls sim/*/*.[ch] | wc -l) files in $(echo $order | wc -w) layers, every include looks down"
exit $bad
