# viewer_display.sh: sourced (not run) by the viewer's window tests
# (viewer_ui.sh, viewer_memory.sh): one Xvfb on a display it picks itself,
# optionally openbox as its window manager and xdotool for real X input.
#   gv_display WORK [--wm]
# skips (77) without the programs, exits 99 when one does not start; exports
# DISPLAY and sets an EXIT trap that stops both and removes WORK.
# -displayfd writes the display's number once the server accepts clients
# (one server rather than an xvfb-run per command, whose clean-up fails now
# and then on a busy machine and turns a pass into exit 5); -noreset keeps
# it from resetting when its last client leaves, which refused the next
# program's connection in the meantime.
gv_display() {
    gv_work=$1 gv_wm=${2:-}
    command -v Xvfb >/dev/null 2>&1 || { echo "skip: Xvfb not found (apt-get install xvfb)"; exit 77; }
    if [ "$gv_wm" = --wm ]; then
        for p in openbox xdotool xprop; do
            command -v $p >/dev/null 2>&1 || { echo "skip: $p not found (apt-get install openbox xdotool x11-utils)"; exit 77; }
        done
    fi
    gv_xvfb_pid="" gv_wm_pid=""
    trap '[ -z "$gv_wm_pid" ] || kill "$gv_wm_pid" 2>/dev/null; [ -z "$gv_xvfb_pid" ] || kill "$gv_xvfb_pid" 2>/dev/null; rm -rf "$gv_work"' EXIT
    Xvfb -displayfd 3 -nolisten tcp -noreset -screen 0 1600x1024x24 3>"$gv_work/display" 2>"$gv_work/xvfb.log" &
    gv_xvfb_pid=$!
    for _ in $(seq 100); do
        [ -s "$gv_work/display" ] && break
        kill -0 "$gv_xvfb_pid" 2>/dev/null || break
        sleep 0.1
    done
    [ -s "$gv_work/display" ] || { cat "$gv_work/xvfb.log"; echo "Xvfb did not start"; exit 99; }
    DISPLAY=:$(cat "$gv_work/display")
    export DISPLAY
    [ "$gv_wm" = --wm ] || return 0
    # A window manager, as on a desktop: it places and decorates (or, for
    # the viewer's header bar, leaves undecorated) the windows the tests open.
    openbox --sm-disable >"$gv_work/wm.log" 2>&1 &
    gv_wm_pid=$!
    for _ in $(seq 100); do
        xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null | grep -q 'window id' && return 0
        kill -0 "$gv_wm_pid" 2>/dev/null || break
        sleep 0.1
    done
    cat "$gv_work/wm.log"
    echo "openbox did not start"
    exit 99
}
