"""oom_snapshot.py: writes a CUDA memory snapshot pickle whose history ends in
an out-of-memory error, in the format torch.cuda.memory._snapshot() returns
(PyTorch 2.x; standard library only, as tests/fixtures/pytorch/make_snapshots.py
does). One 20 MiB segment of device 0 holds, when the allocation fails, three
blocks (6, 4 and 3 MiB at offsets 0, 10 and 17 MiB; allocated in train.py:40 >
model.py:12 > model.py:21, 23, 25) and two free gaps (4 MiB at 6 MiB, 3 MiB at
14 MiB), the 4 and 3 MiB blocks that filled them freed; then REQUEST MiB are
asked with 1 MiB left on the device.

    oom_snapshot.py OUT.pickle REQUEST_MIB
"""
import pickle
import sys

MiB = 1 << 20
T0_US = 1_790_000_000_000_000
BASE = 0x7F0000000000


def frames(*calls):
    """(file, line, name), outermost first; the snapshot lists them innermost first."""
    return [{"filename": f, "line": n, "name": name} for f, n, name in calls][::-1]


STEP = (("train.py", 40, "train_step"), ("model.py", 12, "forward"))


def main():
    out, request = sys.argv[1], int(sys.argv[2]) * MiB
    trace = []

    def act(action, addr, size, dt, fr=()):
        trace.append({"action": action, "addr": addr, "size": size, "stream": 0, "time_us": T0_US + dt,
                      "frames": list(fr)})

    live = [(0, 6, "embed", 21), (10, 4, "mlp", 23), (17, 3, "head", 25)]
    gone = [(6, 4, "attn", 22), (14, 3, "norm", 24)]
    act("segment_alloc", BASE, 20 * MiB, 1, frames(("train.py", 30, "main")))
    for k, (off, size, name, line) in enumerate(sorted(live + gone)):
        act("alloc", BASE + off * MiB, size * MiB, 2 + k, frames(*STEP, ("model.py", line, name)))
    for k, (off, size, _, _) in enumerate(gone):
        act("free_requested", BASE + off * MiB, size * MiB, 10 + 2 * k)
        act("free_completed", BASE + off * MiB, size * MiB, 11 + 2 * k)
    act("oom", 0, request, 20)
    trace[-1]["device_free"] = 1 * MiB

    blocks = []
    for off, size, name, line in sorted(live + gone):
        on = (off, size, name, line) in live
        blocks.append({"address": BASE + off * MiB, "size": size * MiB, "requested_size": size * MiB if on else 0,
                       "state": "active_allocated" if on else "inactive",
                       "frames": frames(*STEP, ("model.py", line, name)) if on else []})
    seg = {"device": 0, "address": BASE, "total_size": 20 * MiB, "stream": 0, "segment_type": "large",
           "segment_pool_id": (0, 0), "is_expandable": False, "allocated_size": 13 * MiB,
           "active_size": 13 * MiB, "requested_size": 13 * MiB, "blocks": blocks}
    snap = {"segments": [seg], "device_traces": [trace],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1}}
    with open(out, "wb") as f:
        pickle.dump(snap, f, protocol=4)


if __name__ == "__main__":
    main()
