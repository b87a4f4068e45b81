#!/bin/sh
# trainer_memlimit.sh: under an address-space limit (ulimit -v), or a data
# limit (ulimit -d: private mappings count since Linux 4.7), the trainer
# ends promptly with one line and status 1, whether the model's states do
# not fit (refused before anything is allocated, with the numbers) or only
# its activations do not (the caching allocator's out-of-memory error, the
# allocator kept below what the limit leaves). OpenBLAS, which retries
# forever when it cannot map a thread's buffer, is never left without room:
# without that, the 2.0 GiB runs below spun in their first matrix product.
set -u
tr="$GT_TOP_BUILDDIR/trainer/trainer"
tmp=$(mktemp -d "${GT_TMPDIR:-/tmp}/trainer-memlimit.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
# a sanitizer build maps terabytes of shadow memory at start: it cannot run under these limits at all
(ulimit -v 1500000 && "$tr" --help) >/dev/null 2>&1 ||
    { echo "skip: the trainer cannot start under ulimit -v (a sanitizer build?)"; exit 77; }
# limited STATUS KIB PATTERN ARGS...: the run under ulimit -v KIB (ulimit -d with LIMIT=-d) ends within
# the timeout with STATUS; a failure with one line on stderr that matches PATTERN
limited() {
    want=$1 kib=$2 pat=$3; shift 3
    (
        ulimit "${LIMIT:--v}" "$kib" || exit 99
        exec timeout 240 "$tr" "$@"
    ) >"$tmp/out" 2>"$tmp/err"
    got=$?
    bad=0
    [ "$got" -eq "$want" ] || bad=1
    if [ "$want" -ne 0 ]; then
        grep -q -- "$pat" "$tmp/err" || bad=1
        [ "$(wc -l <"$tmp/err")" -eq 1 ] || bad=1
    fi
    if [ $bad = 1 ]; then
        echo "FAIL: ulimit ${LIMIT:--v} $kib; trainer $*: status $got (124: it hung), stderr: $(cat "$tmp/err")"
        fails=1
    fi
}
big="--model gpt2-124m --steps 1 --eval-every 0 --threads 2 --workers 0"
# the parameters, gradients and AdamW state (1.28 GiB) cannot fit in 1.43 GiB: refused up front
limited 1 1500000 "the address-space limit (ulimit -v) is 1.43 GiB and this run needs .* GiB before its activations" \
    $big
# they fit in 2.0 GiB, the activations of batch 4 x 1024 do not
limited 1 2100000 "out of memory on cpu\|the address-space limit (ulimit -v)" $big
# the same under a data-size limit
LIMIT=-d limited 1 1500000 "the data-size limit (ulimit -d) is 1.43 GiB and this run needs" $big
LIMIT=-d limited 1 2100000 "out of memory on cpu\|the data-size limit (ulimit -d)" $big
# a run that fits trains as usual, and says what the limit leaves to the allocator
limited 0 4000000 "" --steps 2 --eval-every 0 --threads 2
grep -q "the address-space limit (ulimit -v) of 3.81 GiB leaves .* GiB to the caching allocator" "$tmp/out" &&
    grep -q "^step 2/2" "$tmp/out" || { echo "FAIL: a run under a large limit: $(cat "$tmp/out" "$tmp/err")"; fails=1; }
[ $fails -eq 0 ] && echo "ok"
exit $fails
