# NVTX 3 headers (header-only, Apache-2.0 WITH LLVM-exception): see libtrace/nvtx/README.md.
# configure compiles against them unless --with-nvtx=DIR names others; they go in the tarball.
EXTRA_DIST += libtrace/nvtx/README.md libtrace/nvtx/LICENSE.txt \
	libtrace/nvtx/nvtx3/nvToolsExt.h \
	libtrace/nvtx/nvtx3/nvToolsExtCounters.h \
	libtrace/nvtx/nvtx3/nvToolsExtCuda.h \
	libtrace/nvtx/nvtx3/nvToolsExtCudaRt.h \
	libtrace/nvtx/nvtx3/nvToolsExtMem.h \
	libtrace/nvtx/nvtx3/nvToolsExtMemCudaRt.h \
	libtrace/nvtx/nvtx3/nvToolsExtOpenCL.h \
	libtrace/nvtx/nvtx3/nvToolsExtPayload.h \
	libtrace/nvtx/nvtx3/nvToolsExtPayloadHelper.h \
	libtrace/nvtx/nvtx3/nvToolsExtSemanticsCounters.h \
	libtrace/nvtx/nvtx3/nvToolsExtSemanticsScope.h \
	libtrace/nvtx/nvtx3/nvToolsExtSemanticsTime.h \
	libtrace/nvtx/nvtx3/nvToolsExtSync.h \
	libtrace/nvtx/nvtx3/nvtx3.hpp \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxExtHelperMacros.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxExtImpl.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxExtImplCounters_v1.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxExtImplMemCudaRt_v1.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxExtImplMem_v1.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxExtImplPayload_v1.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxExtInit.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxExtPayloadHelperInternal.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxExtPayloadTypeInfo.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxExtTypes.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxImpl.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxImplCore.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxImplCudaRt_v3.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxImplCuda_v3.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxImplOpenCL_v3.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxImplSync_v3.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxInit.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxInitDecls.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxInitDefs.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxLinkOnce.h \
	libtrace/nvtx/nvtx3/nvtxDetail/nvtxTypes.h
