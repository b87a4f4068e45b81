dnl Libraries on top of the runtime; each is a part of its own in the summary.
AC_DEFUN([GT_CUDA_LIB], [
    $1_LIBS=""; have_$2=no
    AS_IF([test "x$have_cuda" = xyes], [
        gt_save_CPPFLAGS=$CPPFLAGS; gt_save_LDFLAGS=$LDFLAGS; gt_save_LIBS=$LIBS
        CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS"; LDFLAGS="$LDFLAGS $CUDA_LDFLAGS"
        AC_CHECK_HEADER([$3], [AC_CHECK_LIB([$4], [$5], [have_$2=yes; $1_LIBS="-l$4"], [], [$CUDA_LIBS])])
        CPPFLAGS=$gt_save_CPPFLAGS; LDFLAGS=$gt_save_LDFLAGS; LIBS=$gt_save_LIBS])
    AC_SUBST([$1_LIBS])
    AM_CONDITIONAL([HAVE_$1], [test "x$have_$2" = xyes])
    AS_IF([test "x$have_$2" = xyes], [AC_DEFINE([HAVE_$1], [1], [$6 is available]) GT_SUMMARY([  $6], [on])],
          [test "x$have_cuda" = xyes], [GT_SUMMARY([  $6], [off ($3 or lib$4 not found in $CUDA_HOME)])],
          [GT_SUMMARY([  $6], [off (no CUDA)])])
])

dnl GT_CHECK_CUDA: find the CUDA toolkit (nvcc, cudart, CUPTI headers,
dnl cuBLAS/cuBLASLt, cuDNN, NCCL) and choose the NVTX 3 headers. Only compiling and linking is
dnl checked: a machine with the toolkit but no GPU or driver builds everything.
dnl NVTX is header-only and needs no CUDA runtime: its headers are carried in the
dnl tree, so the trainer and the capture library speak NVTX without the toolkit.
AC_DEFUN([GT_CHECK_CUDA], [
AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@], [CUDA 13 toolkit (default: /usr/local/cuda when present); --without-cuda builds a CPU-only gtrace])],
    [], [with_cuda=auto])
AC_ARG_WITH([cuda-arch],
    [AS_HELP_STRING([--with-cuda-arch=LIST], [GPU architectures for .cu files (default: "sm_90 sm_80", plus PTX of the first)])],
    [], [with_cuda_arch="sm_90 sm_80"])
AC_ARG_WITH([nvtx],
    [AS_HELP_STRING([--with-nvtx=DIR], [directory holding nvtx3/ (default: the NVTX 3 headers carried in libtrace/nvtx)])],
    [], [with_nvtx=auto])

have_cuda=no; cuda_why=""
CUDA_HOME=""
AS_CASE([$with_cuda],
    [no], [cuda_why="disabled by --without-cuda"],
    [yes|auto], [AS_IF([test -x /usr/local/cuda/bin/nvcc], [CUDA_HOME=/usr/local/cuda],
                       [cuda_why="no toolkit in /usr/local/cuda (use --with-cuda=DIR)"])],
    [CUDA_HOME=$with_cuda])

CUDA_CPPFLAGS=; CUDA_LDFLAGS=; CUDA_LIBS=; NVCC=; NVCC_ARCH_FLAGS=
AS_IF([test -n "$CUDA_HOME"], [
    AS_IF([test -x "$CUDA_HOME/bin/nvcc"], [NVCC="$CUDA_HOME/bin/nvcc"],
          [cuda_why="no nvcc in $CUDA_HOME/bin"])])
AS_IF([test -n "$NVCC"], [
    CUDA_CPPFLAGS="-I$CUDA_HOME/include"
    cuda_libdir="$CUDA_HOME/lib64"
    AS_IF([test -d "$CUDA_HOME/targets/x86_64-linux/lib"] && ! test -e "$cuda_libdir/libcudart.so",
          [cuda_libdir="$CUDA_HOME/targets/x86_64-linux/lib"])
    CUDA_LDFLAGS="-L$cuda_libdir -Wl,-rpath,$cuda_libdir"
    gt_save_CPPFLAGS=$CPPFLAGS; gt_save_LDFLAGS=$LDFLAGS; gt_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS"; LDFLAGS="$LDFLAGS $CUDA_LDFLAGS"
    AC_CHECK_HEADER([cuda_runtime_api.h], [
        AC_CHECK_LIB([cudart], [cudaGetDeviceCount], [have_cuda=yes; CUDA_LIBS="-lcudart"],
                     [cuda_why="libcudart does not link"])],
        [cuda_why="no cuda_runtime_api.h in $CUDA_HOME/include"])
    CPPFLAGS=$gt_save_CPPFLAGS; LDFLAGS=$gt_save_LDFLAGS; LIBS=$gt_save_LIBS
    if test "x$with_cuda" != xauto && test "x$have_cuda" = xno; then
        AC_MSG_ERROR([--with-cuda was given but the toolkit is unusable: $cuda_why])
    fi
])

dnl nvcc -gencode flags: SASS for each listed arch, PTX for the first.
AS_IF([test "x$have_cuda" = xyes], [
    gt_first_arch=""
    for gt_arch in $with_cuda_arch; do
        gt_num=`echo "$gt_arch" | sed 's/^sm_//; s/^compute_//'`
        AS_CASE([$gt_num], [*[[!0-9a]]*|""], [AC_MSG_ERROR([bad --with-cuda-arch entry '$gt_arch' (expected e.g. sm_90)])])
        NVCC_ARCH_FLAGS="$NVCC_ARCH_FLAGS -gencode arch=compute_$gt_num,code=sm_$gt_num"
        test -n "$gt_first_arch" || gt_first_arch=$gt_num
    done
    NVCC_ARCH_FLAGS="$NVCC_ARCH_FLAGS -gencode arch=compute_$gt_first_arch,code=compute_$gt_first_arch"
    AC_DEFINE([HAVE_CUDA], [1], [the CUDA toolkit is available])
    AC_DEFINE_UNQUOTED([GT_CUDA_LIBDIR], ["$cuda_libdir"], [where the CUDA libraries were found at build time])
])

AS_IF([test "x$have_cuda" = xyes],
      [GT_SUMMARY([CUDA toolkit], [on ($CUDA_HOME, $($NVCC --version | sed -n 's/.*release \([[0-9.]]*\).*/\1/p'), $with_cuda_arch)])],
      [GT_SUMMARY([CUDA toolkit], [off ($cuda_why)])])

GT_CUDA_LIB([CUBLAS], [cublas], [cublas_v2.h], [cublas], [cublasCreate_v2], [cuBLAS])
GT_CUDA_LIB([CUBLASLT], [cublaslt], [cublasLt.h], [cublasLt], [cublasLtCreate], [cuBLASLt])
GT_CUDA_LIB([CUDNN], [cudnn], [cudnn.h], [cudnn], [cudnnCreate], [cuDNN])
GT_CUDA_LIB([NCCL], [nccl], [nccl.h], [nccl], [ncclGetVersion], [NCCL])

dnl CUPTI: headers at build time; the capture library dlopens libcupti at run time.
have_cupti=no; CUPTI_CPPFLAGS=""
AS_IF([test "x$have_cuda" = xyes], [
    for gt_dir in "$CUDA_HOME/include" "$CUDA_HOME/extras/CUPTI/include"; do
        AS_IF([test -f "$gt_dir/cupti.h"], [have_cupti=yes; CUPTI_CPPFLAGS="-I$gt_dir"; break])
    done
    gt_cupti_lib=""
    for gt_dir in "$cuda_libdir" "$CUDA_HOME/extras/CUPTI/lib64"; do
        AS_IF([test -e "$gt_dir/libcupti.so"], [gt_cupti_lib="$gt_dir/libcupti.so"; break])
    done
    AS_IF([test -n "$gt_cupti_lib"], [AC_DEFINE_UNQUOTED([GT_CUPTI_PATH], ["$gt_cupti_lib"], [libcupti found at build time, tried after the default search])])
])
AC_SUBST([CUPTI_CPPFLAGS])
AM_CONDITIONAL([HAVE_CUPTI], [test "x$have_cupti" = xyes])
AS_IF([test "x$have_cupti" = xyes], [AC_DEFINE([HAVE_CUPTI], [1], [CUPTI headers are available]) GT_SUMMARY([  CUPTI], [on (dlopened at run time)])],
      [GT_SUMMARY([  CUPTI], [off (no cupti.h)])])

dnl NVTX 3 headers: the copy carried in libtrace/nvtx (see its README.md) unless
dnl --with-nvtx=DIR names a directory holding another nvtx3/. NVTX is header-only
dnl and calls no CUDA library, so the CPU path needs no toolkit at all.
have_nvtx=no; NVTX_CPPFLAGS=""; gt_nvtx_where=""
AS_CASE([$with_nvtx],
    [no], [],
    [auto|yes], [
        AS_IF([test -f "$srcdir/libtrace/nvtx/nvtx3/nvToolsExt.h" && test -f "$srcdir/libtrace/nvtx/nvtx3/nvToolsExtMem.h"],
              [have_nvtx=yes; NVTX_CPPFLAGS='-I$(top_srcdir)/libtrace/nvtx'; gt_nvtx_where="in the tree, libtrace/nvtx"],
              [AC_MSG_ERROR([the NVTX 3 headers carried in libtrace/nvtx/nvtx3 are missing from the source tree (or pass --with-nvtx=DIR)])])],
    [AS_IF([test -f "$with_nvtx/nvtx3/nvToolsExt.h" && test -f "$with_nvtx/nvtx3/nvToolsExtMem.h"],
           [have_nvtx=yes; NVTX_CPPFLAGS="-I$with_nvtx"; gt_nvtx_where=$with_nvtx],
           [AC_MSG_ERROR([--with-nvtx=$with_nvtx: no nvtx3/nvToolsExt.h and nvtx3/nvToolsExtMem.h there])])])
AC_SUBST([NVTX_CPPFLAGS])
AM_CONDITIONAL([HAVE_NVTX], [test "x$have_nvtx" = xyes])
AS_IF([test "x$have_nvtx" = xyes], [AC_DEFINE([HAVE_NVTX], [1], [NVTX 3 headers are available]) GT_SUMMARY([NVTX 3 headers], [on ($gt_nvtx_where)])],
      [GT_SUMMARY([NVTX 3 headers], [off (--without-nvtx): no trainer, no NVTX capture])])

AC_SUBST([CUDA_HOME])
AC_SUBST([CUDA_CPPFLAGS])
AC_SUBST([CUDA_LDFLAGS])
AC_SUBST([CUDA_LIBS])
AC_SUBST([NVCC])
AC_SUBST([NVCC_ARCH_FLAGS])
AM_CONDITIONAL([HAVE_CUDA], [test "x$have_cuda" = xyes])
])
