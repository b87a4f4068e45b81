#!/usr/bin/env python3
"""snapshot_shapes.py: writes CUDA memory snapshot pickles of hostile or
extreme shapes for import_snapshot_shapes.sh (standard library only):
    python3 snapshot_shapes.py SHAPE OUT [N [M]]

  repeat_traces K M   device_traces = [L] * K, L = [E] * M: K + M memo
                      references that name K x M actions
  repeat_blocks K M   K segments on K devices sharing one list of M blocks
  shared_frames K M   K blocks and K allocs sharing one stack of M frames
                      (PyTorch shares equal stacks so)
  many_devices K S    K references to one empty device list, S segments
  down_segments N     N segments at decreasing addresses, no history
  down_history N      N segments and a block in each at decreasing
                      addresses, all allocated by the history
"""
import pickle
import sys

BASE = 0x7F0000000000
SEG = 2 << 20


def segment(dev, addr, blocks, size=SEG):
    return {"device": dev, "address": addr, "total_size": size, "stream": 0, "segment_type": "large",
            "blocks": blocks}


def block(addr, size, frames=None):
    return {"address": addr, "size": size, "requested_size": size, "state": "active_allocated",
            "frames": frames or []}


def act(action, addr, size, t, frames=None):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": frames or []}


def shape(name, n, m):
    t = 1_790_000_000_000_000
    if name == "repeat_traces":
        entry = act("alloc", BASE, 512, t)
        return {"segments": [segment(0, BASE, [])], "device_traces": [[entry] * m] * n}
    if name == "repeat_blocks":
        blocks = [block(BASE + 512 * i, 512) for i in range(m)]
        return {"segments": [segment(d, BASE, blocks, 512 * m) for d in range(n)]}
    if name == "shared_frames":
        frames = [{"filename": "train.py", "line": i + 1, "name": "f%d" % i} for i in range(m)]
        blocks = [block(BASE + 512 * i, 512, frames) for i in range(n)]
        trace = [act("alloc", BASE + 512 * (n + i), 512, t + i, frames) for i in range(n)]
        return {"segments": [segment(0, BASE, blocks, 1024 * n)], "device_traces": [trace]}
    if name == "many_devices":
        return {"segments": [segment(0, BASE + SEG * i, []) for i in range(m)], "device_traces": [[]] * n}
    if name == "down_segments":
        return {"segments": [segment(0, BASE + SEG * (n - i), []) for i in range(n)]}
    if name == "down_history":
        trace = []
        for i in range(n):
            trace.append(act("segment_alloc", BASE + SEG * (n - i), SEG, t + i))
        for i in range(n):
            trace.append(act("alloc", BASE + SEG * (n - i), 4096, t + n + i))
        segs = [segment(0, BASE + SEG * (n - i), [block(BASE + SEG * (n - i), 4096)]) for i in range(n)]
        return {"segments": segs, "device_traces": [trace]}
    raise SystemExit("unknown shape " + name)


def main():
    name, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    m = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
    with open(out, "wb") as f:
        pickle.dump(shape(name, n, m), f, protocol=4)


if __name__ == "__main__":
    main()
