# dist_common.sh: sourced by the distributed tests. mpirun for CI machines:
# root allowed (containers), more ranks than cores allowed, shared memory
# and TCP on loopback only (no network probing), single-threaded BLAS and
# OpenMP per rank, passive waits so ranks sharing cores do not spin.
OMPI_ALLOW_RUN_AS_ROOT=1; OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OMPI_MCA_btl=self,vader,tcp; OMPI_MCA_btl_tcp_if_include=lo; OMPI_MCA_oob_tcp_if_include=lo
OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_btl OMPI_MCA_btl_tcp_if_include
export OMPI_MCA_oob_tcp_if_include OMPI_MCA_rmaps_base_oversubscribe
OMP_WAIT_POLICY=passive; OMP_NUM_THREADS=1; OPENBLAS_NUM_THREADS=1
export OMP_WAIT_POLICY OMP_NUM_THREADS OPENBLAS_NUM_THREADS
# dist_mpirun NP PROGRAM ARGS...
dist_mpirun() {
    dist_np=$1; shift
    mpirun --oversubscribe --bind-to none -np "$dist_np" "$@"
}
