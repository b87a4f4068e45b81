# samples/problems: the advice gallery, one program per performance problem
# and its --fixed twin (see problem.h), run by tests/integration/problem_gallery.sh.
if HAVE_NVTX
check_PROGRAMS += samples/problems/clean samples/problems/sync samples/problems/launch samples/problems/loader samples/problems/leak samples/problems/churn samples/problems/spike samples/problems/frag samples/problems/conv
samples_problems_clean_SOURCES = samples/problems/clean.c samples/problems/problem.h
samples_problems_clean_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_problems_clean_LDADD = $(DL_LIBS)
samples_problems_sync_SOURCES = samples/problems/sync.c samples/problems/problem.h
samples_problems_sync_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_problems_sync_LDADD = $(PTHREAD_LIBS) $(DL_LIBS)
samples_problems_launch_SOURCES = samples/problems/launch.c samples/problems/problem.h
samples_problems_launch_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_problems_launch_LDADD = $(DL_LIBS)
samples_problems_loader_SOURCES = samples/problems/loader.c samples/problems/problem.h
samples_problems_loader_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_problems_loader_LDADD = $(PTHREAD_LIBS) $(DL_LIBS)
samples_problems_leak_SOURCES = samples/problems/leak.c samples/problems/problem.h
samples_problems_leak_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_problems_leak_LDADD = $(DL_LIBS)
samples_problems_churn_SOURCES = samples/problems/churn.c samples/problems/problem.h
samples_problems_churn_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_problems_churn_LDADD = $(DL_LIBS)
samples_problems_spike_SOURCES = samples/problems/spike.c samples/problems/problem.h
samples_problems_spike_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_problems_spike_LDADD = $(DL_LIBS)
samples_problems_frag_SOURCES = samples/problems/frag.c samples/problems/problem.h
samples_problems_frag_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_problems_frag_LDADD = $(DL_LIBS)
samples_problems_conv_SOURCES = samples/problems/conv.c samples/problems/problem.h
samples_problems_conv_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_problems_conv_LDADD = $(DL_LIBS)
# Not in the gallery: a caching allocator that runs out of memory (oom_allocator.sh).
check_PROGRAMS += samples/problems/oom
samples_problems_oom_SOURCES = samples/problems/oom.c samples/problems/problem.h
samples_problems_oom_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_problems_oom_LDADD = $(DL_LIBS)
TESTS += tests/integration/problem_gallery.sh
endif
EXTRA_DIST += tests/integration/problem_gallery.sh tests/integration/problem_gallery.py
