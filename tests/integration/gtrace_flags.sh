#!/bin/sh
# gtrace_flags.sh: a gtrace flag is described once, in its command's table
# (libtrace/cli/flag_tables.c), which makes the parser and --help; the man
# page (gtrace.1) is written by hand. Fails when a file of libtrace/cli
# parses an option itself (getopt, or argv compared with an option's name)
# instead of through the tables; when a command's --help flag column and its
# part of the man page name different flags (the OPTIONS list for recording,
# the subcommand's heading line for the others); when a flag has no help
# text; when a command does not take --help; when a default --help states
# is not the man page's; and when a bad value, a value
# out of range or a missing value is not one line and exit status 2.
# test_cli_flags (CUnit) holds each table row to the --help column.
set -u
g="$GT_TOP_BUILDDIR/libtrace/cli/gtrace"
cli="$GT_TOP_SRCDIR/libtrace/cli"
man="$cli/gtrace.1"
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=1; }

# ---- only the tables parse ----
for f in "$cli"/*.c; do
    case $(basename "$f") in flags.c | flag_tables.c) continue ;; esac
    # an option's name compared with argv ("--" alone, diff's separator, is an operand)
    grep -nE 'getopt|struct option|optarg|str(n)?cmp\(argv\[[^]]*\], *"-([^-"]|-[^"])' "$f" |
        sed "s|^|$(basename "$f"):|" >>"$work/parsers"
done
[ -s "$work/parsers" ] && fail "options parsed outside the tables: $(cat "$work/parsers")"

# ---- a command's flags in --help and in the man page ----
# the flag column: "  -o, --output=FILE   text" or "      --json  text"; a row without
# text would print no line of its own
column() { # FILE: a row a line, its names: "-o --output", "--json", "--delay --duration"
    awk '/^(  -|      --)/ { left = $0; sub(/^ +/, "", left); sub(/  .*/, "", left)
                  n = split(left, items, /, /); row = ""
                  for (i = 1; i <= n; i++) { f = items[i]; sub(/[[= ].*/, "", f); row = row (i > 1 ? " " : "") f }
                  print row }' "$1"
}
# the man page's flags of a part: OPTIONS' headings for recording, the
# subcommand's heading line for a subcommand
man_part() { # COMMAND (empty: recording)
    sed 's/\\-/-/g; s/\\f[BIRP]//g' "$man" | awk -v cmd="$1" '
        /^\.SH / { sec = $2; next }
        prev == ".TP" && cmd == "" && sec == "OPTIONS" { print }
        prev == ".TP" && cmd != "" && sec == "SUBCOMMANDS" && $1 == cmd { print }
        { prev = $0 }'
}
for cmd in "" info report diff memory export import merge recover; do
    name=${cmd:-recording}
    # shellcheck disable=SC2086
    "$g" $cmd --help >"$work/help" 2>"$work/help.err" || fail "gtrace $cmd --help exits $?"
    column "$work/help" >"$work/column"
    grep -q -- '--help' "$work/column" || fail "$name: --help has no line for --help"
    man_part "$cmd" >"$work/man"
    [ -s "$work/man" ] || { fail "$name: no part of gtrace.1 found"; continue; }
    grep -o -- '--[a-z][a-z0-9-]*[a-z0-9]' "$work/man" | sort -u >"$work/man.long"
    grep -oE -- '(^|[^a-zA-Z0-9-])-[a-zA-Z]([^a-zA-Z]|$)' "$work/man" | grep -oE -- '-[a-zA-Z]' | sort -u >"$work/man.short"
    n=0
    while read -r row; do
        n=$((n + 1))
        case " $row " in *" --help "* | *" --version "*) [ -n "$cmd" ] && continue ;; esac
        found=1 short=
        for f in $row; do
            case $f in --*) ;; *) short=$f ;; esac
        done
        for f in $row; do
            case $f in
            --*) grep -qx -- "$f" "$work/man.long" ||
                { [ -n "$short" ] && grep -qx -- "$short" "$work/man.short"; } || found= ;;
            esac
        done
        [ -n "$found" ] || fail "$name: the table has $row, gtrace.1 does not say it"
    done <"$work/column"
    [ "$n" -ge 1 ] || fail "$name: no flags in --help"
    tr ' ' '\n' <"$work/column" | sort -u >"$work/column.all"
    for f in $(cat "$work/man.long" "$work/man.short"); do
        grep -qx -- "$f" "$work/column.all" || fail "$name: gtrace.1 names $f, the table does not have it"
    done
done
grep -q 'Each subcommand takes.*-help' "$man" || fail "gtrace.1 does not say that each subcommand takes --help"

# ---- a default --help states (made from the table) is the man page's ----
"$g" --help | awk '/^(  -., |      )--[a-z]/ { flag = $0; sub(/^ *(-., )?--/, "", flag); sub(/[^a-z-].*/, "", flag) }
    /\(default [^)]*\)$/ { d = $0; sub(/.*\(default /, "", d); sub(/\)$/, "", d); print flag, d }' >"$work/defaults"
[ -s "$work/defaults" ] || fail "recording: --help states no default"
while read -r flag def; do
    # the flag's paragraph in the man page: from its .TP heading to the next
    sed 's/\\-/-/g; s/\\f[BIRP]//g' "$man" | awk -v f="--$flag" '
        /^\.TP/ { on = 0 } prev ~ /^\.TP/ && index($0, f) == 1 { on = 1 } on { print } { prev = $0 }' >"$work/para"
    grep -qE "default $def([^0-9]|\$)|$def \(the default\)" "$work/para" ||
        fail "recording: --$flag's default is $def in --help, not in gtrace.1"
done <"$work/defaults"

# ---- bad values: one line, exit status 2 ----
one_line() { # WHAT TEXT COMMAND...: the first line says TEXT, exit 2, then at most the usage
    what=$1 text=$2
    shift 2
    "$@" >"$work/out" 2>"$work/err" </dev/null
    rc=$?
    [ "$rc" -eq 2 ] || fail "$what: exit $rc, 2 expected"
    head -1 "$work/err" | grep -q -- "^gtrace: .*$text" || fail "$what: $(head -1 "$work/err")"
    [ ! -s "$work/out" ] || fail "$what: wrote on stdout"
    # what follows the line can only be the usage
    if [ "$(wc -l <"$work/err")" -gt 1 ] && ! sed -n 2p "$work/err" | grep -qi '^usage: gtrace'; then
        fail "$what: more than one line of error: $(cat "$work/err")"
    fi
}
one_line "recording: bad int" "--stacks=x: expected a number of frames from 0 to 64" "$g" --stacks=x true
one_line "recording: out of range" "--flush-ms=0: expected milliseconds from 1 to 60000" "$g" --flush-ms=0 true
one_line "recording: seconds" "--delay=-1: expected seconds from 0 to 604800" "$g" --delay=-1 true
one_line "recording: choice" "--cuda=x: expected auto, on or off" "$g" --cuda=x true
one_line "recording: missing value" "--stacks" "$g" --stacks
one_line "report: out of range" "report: --top wants a number from 1 to 100000" "$g" report --top 0 t
one_line "report: missing value" "report: .*'--top'" "$g" report t --top
one_line "memory: bad int" "memory: --pid wants a process id, not 'x'" "$g" memory --at 1 --pid x t
one_line "memory: bad time" "memory: --at wants a time .*; not 'soon'" "$g" memory --at soon t
one_line "export: choice" "export: --memviz-format wants 2 (PyTorch 2.x) or 1.13, not '3'" \
    "$g" export t --format memviz --memviz-format 3
one_line "export: missing value" "export: .*missing value: '-o'" "$g" export t --format chrome -o
one_line "diff: out of range" "diff: --noise-floor wants a percentage from 0 to 100" "$g" diff --noise-floor 101 a b
one_line "import: missing value" "import: -o wants the trace to write" "$g" import a.json -o
one_line "merge: unknown" "merge: unknown option '--x'" "$g" merge --x a
one_line "recover: unknown" "recover: unknown option '--x'" "$g" recover --x d
one_line "info: unknown" "info: unknown option '--chek'" "$g" info --chek t
one_line "info: no trace" "usage: gtrace info TRACE" "$g" info --check
exit $fails
