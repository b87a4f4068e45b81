#!/usr/bin/env python3
"""mutate_import.py: damages a copy of a file `gtrace import` reads, deterministically.

    mutate_import.py SEED OUT CASE     prints what was done to OUT

SEED is a torch.profiler trace (*.json, *.json.gz: Kineto's Chrome trace
JSON) or a CUDA memory snapshot (*.pickle); OUT is written in the same form
(gzipped again for .gz). CASE is a number (a random case, drawn from
random.Random(CASE)) or the name of a fixed case in FIXED. Kineto damage is
done on the parsed events (odd and extreme values, NaN and Infinity, \\u0000
and lone surrogates, wrong types, deep nesting, many threads and devices,
[memory] events with descending addresses, events repeated) and then on the
bytes (flips, truncation, a byte-order mark); snapshot damage on the
unpickled dict (shared lists through the pickle memo, deep nesting,
descending addresses, huge device counts and ids, extreme sizes and times,
wrong types, missing keys), pickled with protocol 2 or 4, and then on the
bytes. The seeds are the project's own fixtures: loading them runs nothing
foreign. Standard library only.
"""
import copy
import gzip
import json
import os
import pickle
import random
import sys

I64_MAX = 2**63 - 1
I64_MIN = -2**63
EXTREMES = [I64_MAX, I64_MIN, I64_MAX - 1, I64_MIN + 1, -1, 0, 2**62, -2**62, 2**63, -2**63 - 1, 2**64, 2**31,
            -2**31, 2**53 + 1]
ODD = [float("nan"), float("inf"), float("-inf"), 1e300, -1e300, 1.5, "12", "", None, True, [], {}, [1, 2]]
ODD_STRINGS = ["a\u0000b", "\ud800", "\udfff", "\u0000", "\x1b[31m", "\u202e", "x" * (1 << 20), "ProfilerStep#" + "9" * 30,
               "ProfilerStep#-1", "nccl:" + "\u0000", "[memory]"]

# Fixed cases: known ways an import input goes wrong; each applies to one format.
FIXED_KINETO = ["kineto-nonfinite", "kineto-nul-names", "kineto-times-extreme", "kineto-memory-extreme",
                "kineto-memory-descending", "kineto-many-threads", "kineto-many-devices", "kineto-deep-args",
                "kineto-bom"]
FIXED_PICKLE = ["pickle-memo-sharing", "pickle-memo-frames", "pickle-deep", "pickle-descending",
                "pickle-huge-devices", "pickle-extreme", "pickle-many-devices"]
FIXED = FIXED_KINETO + FIXED_PICKLE


def kind_of(path):
    return "pickle" if path.endswith(".pickle") else "kineto"


# ---- Kineto JSON --------------------------------------------------------------

def load_kineto(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"))


def events_of(doc):
    return doc if isinstance(doc, list) else doc.setdefault("traceEvents", [])


def memory_events(ev):
    return [e for e in ev if isinstance(e, dict) and e.get("name") == "[memory]" and isinstance(e.get("args"), dict)]


def pick(ev, rnd, n=None):
    objs = [e for e in ev if isinstance(e, dict)]
    if not objs:
        return []
    return rnd.sample(objs, min(len(objs), n or rnd.choice([1, 1, 3, 20])))


def k_nonfinite(doc, rnd):
    done = 0
    for e in pick(events_of(doc), rnd):
        e[rnd.choice(["ts", "dur"])] = rnd.choice([float("nan"), float("inf"), float("-inf")])
        done += 1
    return "%d NaN/Infinity times" % done


def k_extreme(doc, rnd):
    done = []
    for e in pick(events_of(doc), rnd):
        k = rnd.choice(["ts", "dur", "pid", "tid", "ts", "dur"])
        v = rnd.choice(EXTREMES + [9.3e18, -9.3e18, 1e20, 92233720368547758.07])
        e[k] = v
        done.append(k)
    if isinstance(doc, dict) and rnd.random() < 0.3:
        doc["baseTimeNanoseconds"] = rnd.choice(EXTREMES)
        done.append("baseTimeNanoseconds")
    return "extreme " + ",".join(done)


def k_wrong_type(doc, rnd):
    done = []
    for e in pick(events_of(doc), rnd):
        k = rnd.choice(["ts", "dur", "pid", "tid", "ph", "cat", "name", "args"])
        e[k] = copy.deepcopy(rnd.choice(ODD))
        done.append(k)
    return "wrong types in " + ",".join(done)


def k_strings(doc, rnd):
    done = []
    for e in pick(events_of(doc), rnd):
        k = rnd.choice(["name", "cat", "ph", "pid", "tid"])
        e[k] = rnd.choice(ODD_STRINGS)
        done.append(k)
    return "odd strings in " + ",".join(done)


def k_drop(doc, rnd):
    done = []
    for e in pick(events_of(doc), rnd):
        if e:
            k = rnd.choice(sorted(e))
            del e[k]
            done.append(k)
    return "dropped " + ",".join(done)


def k_args(doc, rnd):
    keys = ["Addr", "Bytes", "Total Allocated", "Total Reserved", "Device Id", "Device Type", "correlation",
            "device", "stream", "grid", "block", "Input Dims", "Input type", "registers per thread", "name"]
    done = []
    for e in pick(events_of(doc), rnd):
        a = e.setdefault("args", {})
        if not isinstance(a, dict):
            continue
        k = rnd.choice(keys)
        if k in ("grid", "block", "Input Dims"):
            a[k] = rnd.choice([[I64_MAX, -1, 2**31], [[2**40, 2**40]], [[[2**62], [2**62]]], [], "x", [[]] * 50])
        else:
            a[k] = rnd.choice(EXTREMES + ODD[:6])
        done.append(k)
    return "odd args " + ",".join(done)


def k_deep(doc, rnd):
    e = (pick(events_of(doc), rnd, 1) or [None])[0]
    if e is None:
        return None
    depth = rnd.choice([60, 62, 63, 64, 65, 200])
    v = 1
    for _ in range(depth):
        v = [v] if rnd.random() < 0.5 else {"k": v}
    e.setdefault("args", {})
    if isinstance(e["args"], dict):
        e["args"]["deep"] = v
    return "args nested %d deep" % depth


def k_repeat(doc, rnd):
    ev = events_of(doc)
    objs = [e for e in ev if isinstance(e, dict)]
    if not objs:
        return None
    e = rnd.choice(objs)
    n = rnd.choice([100, 1000, 5000])
    ev.extend(copy.deepcopy(e) for _ in range(n))
    return "one event repeated %d times" % n


def k_memory_descending(doc, rnd):
    """[memory] events whose addresses come down, allocated and freed."""
    ev = events_of(doc)
    n = rnd.choice([200, 2000, 8000])
    dev = rnd.choice([0, 1, -1])
    top = rnd.choice([2**47, 2**63 - 1, 2**64 - 1])
    for i in range(n):
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1,
                   "ts": 1 + i, "args": {"Addr": top - i * 512, "Bytes": 512 if i < n // 2 else -512,
                                         "Total Allocated": 512 * min(i, n - i), "Total Reserved": 2**30,
                                         "Device Id": dev, "Device Type": 1 if dev >= 0 else 0}})
    return "%d [memory] events at descending addresses" % n


def k_memory_extreme(doc, rnd):
    mem = memory_events(events_of(doc)) or pick(events_of(doc), rnd, 3)
    done = 0
    for e in rnd.sample(mem, min(len(mem), rnd.choice([1, 3, 20]))):
        e["name"] = "[memory]"
        a = e.setdefault("args", {})
        if not isinstance(a, dict):
            continue
        for k in ("Addr", "Bytes", "Total Allocated", "Total Reserved", "Device Id"):
            if rnd.random() < 0.6:
                a[k] = rnd.choice(EXTREMES)
        done += 1
    return "%d [memory] events at int64's ends" % done


def k_many_threads(doc, rnd):
    ev = events_of(doc)
    n = rnd.choice([1000, 5000])
    for i in range(n):
        ev.append({"ph": "X", "cat": "python_function", "name": "f", "pid": 1, "tid": 100000 + i, "ts": 1 + i, "dur": 1})
        ev.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": 200000 + i, "args": {"name": "t%d" % i}})
    return "%d threads" % n


def k_many_devices(doc, rnd):
    ev = events_of(doc)
    n = rnd.choice([500, 3000])
    for i in range(n):
        ev.append({"ph": "X", "cat": "kernel", "name": "k", "pid": i, "tid": 7, "ts": 1 + i, "dur": 1,
                   "args": {"device": rnd.choice([i, 2**31 - 1 - i, -i]), "stream": i, "correlation": i}})
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1,
                   "ts": 1 + i, "args": {"Addr": 4096, "Bytes": 64, "Total Allocated": 64, "Total Reserved": 64,
                                         "Device Id": rnd.choice([i, 2**31 - 1 - i]), "Device Type": 1}})
    if isinstance(doc, dict):
        doc["deviceProperties"] = [{"id": rnd.choice([i, 2**62, -1]), "name": "g", "totalGlobalMem": I64_MAX}
                                   for i in range(200)]
    return "%d devices" % n


KINETO_MUTATIONS = [k_nonfinite, k_extreme, k_wrong_type, k_strings, k_drop, k_args, k_deep, k_repeat,
                    k_memory_descending, k_memory_extreme, k_many_threads, k_many_devices]


def dump_kineto(doc, out, gz, rnd=None):
    text = json.dumps(doc, allow_nan=True, ensure_ascii=rnd.random() < 0.7 if rnd else True).encode(
        "utf-8", "surrogatepass")
    with (gzip.open if gz else open)(out, "wb") as f:
        f.write(text)


def kineto_fixed(doc, name, rnd):
    m = {"kineto-nonfinite": k_nonfinite, "kineto-nul-names": k_strings, "kineto-times-extreme": k_extreme,
         "kineto-memory-extreme": k_memory_extreme, "kineto-memory-descending": k_memory_descending,
         "kineto-many-threads": k_many_threads, "kineto-many-devices": k_many_devices, "kineto-deep-args": k_deep}
    if name == "kineto-bom":
        return "a byte-order mark"
    return m[name](doc, rnd)


# ---- snapshot pickles ------------------------------------------------------------

def load_pickle(path):
    with open(path, "rb") as f:
        return pickle.load(f)


def list_at(d, key):
    """d[key] when it is a list (an earlier mutation may have made it anything)."""
    v = d.get(key) if isinstance(d, dict) else None
    return v if isinstance(v, list) else []


def distinct(xs):
    """The dicts of xs, each once: an earlier mutation may have shared one object
    100000 times, and walking every reference would take minutes."""
    seen, out = set(), []
    for x in xs:
        if isinstance(x, dict) and id(x) not in seen:
            seen.add(id(x))
            out.append(x)
    return out


def segments_of(d):
    return distinct(list_at(d, "segments"))


def blocks_of(d):
    return distinct(b for s in segments_of(d) for b in list_at(s, "blocks"))


def actions_of(d):
    traces = {id(t): t for t in list_at(d, "device_traces") if isinstance(t, list)}.values()
    return distinct(a for t in traces for a in t)


def p_memo_sharing(d, rnd):
    """One segment list referenced many times: the memo makes it small in bytes, large when expanded."""
    segs = list_at(d, "segments")
    if not segs:
        return None
    n = rnd.choice([1000, 20000, 100000])
    seg = segs[0]
    d["segments"] = [seg] * n
    if rnd.random() < 0.5 and list_at(d, "device_traces"):
        d["device_traces"] = [d["device_traces"][0]] * rnd.choice([64, 1000])
    return "the first segment referenced %d times" % n


def p_memo_frames(d, rnd):
    """One long frames list shared by every block and action."""
    frames = [{"filename": "f%d.py" % i, "line": i, "name": "fn"} for i in range(rnd.choice([100, 1000]))]
    n = 0
    for x in blocks_of(d) + actions_of(d):
        x["frames"] = frames
        n += 1
    blocks = [b for b in blocks_of(d)][:1]
    segs = segments_of(d)
    if blocks and segs:
        segs[0]["blocks"] = blocks * rnd.choice([1000, 10000])
    return "%d frames shared by %d blocks and actions" % (len(frames), n)


def p_deep(d, rnd):
    depth = rnd.choice([50, 99, 100, 101, 200, 400])
    v = []
    for _ in range(depth):
        v = [v] if rnd.random() < 0.5 else {"frames": v}
    target = (blocks_of(d) + actions_of(d) or [d])[0]
    target["frames"] = v
    return "frames nested %d deep" % depth


def p_descending(d, rnd):
    """Many segments and blocks at descending addresses, with actions on them."""
    n = rnd.choice([500, 5000, 20000])
    top = rnd.choice([2**47, 2**63, 2**64 - 1])
    segs = []
    for i in range(n):
        a = top - (i + 1) * 4096
        segs.append({"device": 0, "address": a, "total_size": 4096, "stream": 0, "segment_type": "small",
                     "allocated_size": 512, "active_size": 512, "requested_size": 512,
                     "blocks": [{"address": a, "size": 512, "requested_size": 512, "state": "active_allocated",
                                 "frames": []}]})
    d["segments"] = segs
    if rnd.random() < 0.5:
        d["device_traces"] = [[{"action": rnd.choice(["alloc", "free_requested", "free_completed", "segment_alloc"]),
                                "addr": top - (i + 1) * 4096, "size": 512, "stream": 0, "time_us": 10**15 + i,
                                "frames": []} for i in range(n)]]
    return "%d segments at descending addresses" % n


def p_huge_devices(d, rnd):
    done = []
    for s in list_at(d, "segments"):
        if isinstance(s, dict) and rnd.random() < 0.5:
            s["device"] = rnd.choice([2**31 - 1, 2**31, 2**62, I64_MAX, -1, 65535, 64])
            done.append(str(s["device"]))
    return "segment devices " + ",".join(done[:5])


def p_many_devices(d, rnd):
    """A device_traces list of many devices (empty lists, or one shared), the real one last."""
    old = d.get("device_traces")
    n = rnd.choice([1000, 100000])
    new = [[] for _ in range(n)] if rnd.random() < 0.5 else [[]] * n
    new[-1] = old[0] if isinstance(old, list) and old else []
    d["device_traces"] = new
    return "%d device traces" % n


def p_extreme(d, rnd):
    keys = ["address", "size", "total_size", "requested_size", "allocated_size", "addr", "time_us", "stream",
            "device", "line"]
    done = []
    xs = segments_of(d) + blocks_of(d) + actions_of(d)
    for x in rnd.sample(xs, min(len(xs), rnd.choice([1, 3, 10]))) if xs else []:
        k = rnd.choice([k for k in keys if k in x] or keys)
        x[k] = rnd.choice(EXTREMES + [2**64 - 1, 2**100, -2**100])
        done.append(k)
    return "extreme " + ",".join(done)


def p_wrong_type(d, rnd):
    done = []
    xs = [d] + segments_of(d) + blocks_of(d) + actions_of(d)
    for x in rnd.sample(xs, min(len(xs), rnd.choice([1, 3, 10]))):
        if not x:
            continue
        k = rnd.choice(sorted(x, key=str))
        x[k] = copy.deepcopy(rnd.choice(ODD + ["x" * 1000, b"\xff\x00", (1, 2), 2**70]))
        done.append(str(k))
    return "wrong types in " + ",".join(done)


def p_drop(d, rnd):
    done = []
    xs = [d] + segments_of(d) + blocks_of(d) + actions_of(d)
    for x in rnd.sample(xs, min(len(xs), rnd.choice([1, 3]))):
        if x:
            k = rnd.choice(sorted(x, key=str))
            del x[k]
            done.append(str(k))
    return "dropped " + ",".join(done)


def p_actions(d, rnd):
    acts = ["alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "segment_map",
            "segment_unmap", "snapshot", "oom", "bogus", ""]
    done = 0
    for a in actions_of(d):
        if rnd.random() < 0.3:
            a["action"] = rnd.choice(acts)
            done += 1
    tr = d.get("device_traces")
    if isinstance(tr, list) and tr and isinstance(tr[0], list) and rnd.random() < 0.5:
        rnd.shuffle(tr[0])
    return "%d actions changed, order shuffled" % done


PICKLE_MUTATIONS = [p_memo_sharing, p_memo_frames, p_deep, p_descending, p_huge_devices, p_many_devices,
                    p_extreme, p_wrong_type, p_drop, p_actions]


def pickle_fixed(d, name, rnd):
    return {"pickle-memo-sharing": p_memo_sharing, "pickle-memo-frames": p_memo_frames, "pickle-deep": p_deep,
            "pickle-descending": p_descending, "pickle-huge-devices": p_huge_devices, "pickle-extreme": p_extreme,
            "pickle-many-devices": p_many_devices}[name](d, rnd)


# ---- bytes ---------------------------------------------------------------------------

def byte_damage(out, rnd, gz):
    with (gzip.open if gz else open)(out, "rb") as f:
        data = bytearray(f.read())
    what = []
    for _ in range(rnd.choice([1, 1, 2])):
        k = rnd.random()
        if k < 0.4 and data:
            for _ in range(rnd.choice([1, 4, 32])):
                i = rnd.randrange(len(data))
                data[i] = rnd.randrange(256)
            what.append("flipped bytes")
        elif k < 0.7 and data:
            data = data[:rnd.randrange(len(data))]
            what.append("truncated to %d bytes" % len(data))
        elif k < 0.8:
            data = bytearray(b"\xef\xbb\xbf") + data
            what.append("a byte-order mark")
        elif data:
            i = rnd.randrange(len(data))
            data[i:i] = bytes(rnd.randrange(256) for _ in range(rnd.choice([1, 16])))
            what.append("inserted bytes")
    with (gzip.open if gz else open)(out, "wb") as f:
        f.write(bytes(data))
    if gz and rnd.random() < 0.2:  # the gzip stream itself cut short or flipped
        with open(out, "rb") as f:
            raw = bytearray(f.read())
        if rnd.random() < 0.5:
            raw = raw[:rnd.randrange(1, len(raw))]
        else:
            raw[rnd.randrange(len(raw))] ^= 0xff
        with open(out, "wb") as f:
            f.write(bytes(raw))
        what.append("gzip stream damaged")
    return ", ".join(what)


def mutate(seed, out, case):
    """Writes OUT from SEED; returns what was done, or None when the case does not apply to the seed."""
    kind = kind_of(seed)
    fixed = case in FIXED
    if fixed and (case in FIXED_KINETO) != (kind == "kineto"):
        return None
    rnd = random.Random(case if fixed else int(case))
    done = []
    if kind == "kineto":
        gz = seed.endswith(".gz")
        doc = load_kineto(seed)
        if fixed:
            done.append(kineto_fixed(doc, case, rnd))
        elif rnd.random() < 0.85:
            for _ in range(rnd.choice([1, 1, 2, 3])):
                done.append(rnd.choice(KINETO_MUTATIONS)(doc, rnd) or "")
        dump_kineto(doc, out, gz, rnd)
        if case == "kineto-bom":
            with (gzip.open if gz else open)(out, "rb") as f:
                data = f.read()
            with (gzip.open if gz else open)(out, "wb") as f:
                f.write(b"\xef\xbb\xbf" + data)
        if not fixed and rnd.random() < 0.35:
            done.append(byte_damage(out, rnd, gz))
    else:
        d = load_pickle(seed)
        if not isinstance(d, dict):
            return None
        if fixed:
            done.append(pickle_fixed(d, case, rnd))
        elif rnd.random() < 0.85:
            for _ in range(rnd.choice([1, 1, 2, 3])):
                done.append(rnd.choice(PICKLE_MUTATIONS)(d, rnd) or "")
        sys.setrecursionlimit(10000)
        with open(out, "wb") as f:
            pickle.dump(d, f, protocol=rnd.choice([2, 4]))
        if not fixed and rnd.random() < 0.35:
            done.append(byte_damage(out, rnd, False))
    os.chmod(out, 0o644)
    return "; ".join(x for x in done if x) or "unchanged"


def main(argv):
    if len(argv) != 4:
        sys.stderr.write("usage: mutate_import.py SEED OUT CASE\n")
        return 2
    print(mutate(argv[1], argv[2], argv[3]) or "not applicable")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
