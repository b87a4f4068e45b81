# trainer_cnn_common.sh: sourced by the trainer_cnn*.sh tests: the trainer's
# path, a scratch folder ($work, removed at exit), and a small synthetic
# Fashion-MNIST-shaped set written there as idx files (gzip): $work/fm, and
# $work/bad whose test labels are one short of its images.
set -u
tr="$GT_TOP_BUILDDIR/trainer/trainer"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 writes the idx files"; exit 77; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
fails=0
export OMP_WAIT_POLICY=passive
# 600 training and 200 test images: class k is a bright bar at row 2k+4, with noise
python3 - "$work" <<'PY' || exit 1
import gzip, os, random, struct, sys
d = sys.argv[1]
os.makedirs(d + "/fm", exist_ok=True)
os.makedirs(d + "/bad", exist_ok=True)
rng = random.Random(5)
def images(n):
    labels, px = [], bytearray()
    for i in range(n):
        k = rng.randrange(10)
        labels.append(k)
        for r in range(28):
            for c in range(28):
                v = rng.randrange(60) + (180 if r == 2 * k + 4 and 4 <= c < 24 else 0)
                px.append(min(v, 255))
    return labels, bytes(px)
def write(path, magic, dims, data, gz=True):
    raw = struct.pack(">I", magic) + b"".join(struct.pack(">I", x) for x in dims) + data
    if gz:
        with gzip.open(path, "wb") as f:
            f.write(raw)
    else:
        with open(path, "wb") as f:
            f.write(raw)
for name, n in (("train", 600), ("t10k", 200)):
    labels, px = images(n)
    write(f"{d}/fm/{name}-images-idx3-ubyte.gz", 0x803, [n, 28, 28], px)
    write(f"{d}/fm/{name}-labels-idx1-ubyte.gz", 0x801, [n], bytes(labels))
    # bad: the test labels one short of the images
    write(f"{d}/bad/{name}-images-idx3-ubyte.gz", 0x803, [n, 28, 28], px)
    write(f"{d}/bad/{name}-labels-idx1-ubyte.gz", 0x801, [n - (name == "t10k")], bytes(labels[: n - (name == "t10k")]))
PY
