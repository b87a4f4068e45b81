# launches.sed: rewrites the CUDA launches of a .cu file for the SIMT
# emulator (tests/simt/simt.h):
#   kernel<T><<<grid, block, smem, stream>>>(args)
# becomes
#   simt::launch("kernel<T>", grid, block, smem, stream)[kernel<T>](args)
# A launch's kernel and configuration are on one line, as in kernels/cuda.
s/\([A-Za-z_][A-Za-z0-9_]*\(<[A-Za-z0-9_, ]*>\)\{0,1\}\)<<<\([^>]*\)>>>/simt::launch("\1", \3)[\1]/g
