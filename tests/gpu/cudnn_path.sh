# shellcheck shell=sh
# cudnn_path.sh, sourced by device_check.sh and bench/bench_gpu.sh: the
# trainer dlopens libcudnn.so.9 (its own attention kernel runs without it).
# Where the system has none, as on a machine whose only cuDNN is the one
# inside PyTorch's wheel (nvidia-cudnn-cu13), put that one's directory on
# LD_LIBRARY_PATH. Says what it did.
cudnn_on_path() {
    if ldconfig -p 2>/dev/null | grep -q 'libcudnn\.so\.9 ' || [ -e /usr/local/cuda/lib64/libcudnn.so.9 ]; then
        echo "cuDNN: the system's libcudnn.so.9"
        return 0
    fi
    gt_cudnn_dir=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))' \
        2>/dev/null)
    if [ -n "$gt_cudnn_dir" ] && [ -e "$gt_cudnn_dir/libcudnn.so.9" ]; then
        LD_LIBRARY_PATH=$gt_cudnn_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        export LD_LIBRARY_PATH
        echo "cuDNN: PyTorch's, $gt_cudnn_dir (on LD_LIBRARY_PATH)"
        return 0
    fi
    echo "cuDNN: none found (no libcudnn.so.9 on the system, no nvidia.cudnn Python package):" \
        "the own attention kernel only"
    return 1
}
