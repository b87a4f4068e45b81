# tests/fuzz: every reader entry point (gtrace info, report, memory, diff,
# export; gtrace-view's headless views) on damaged traces; see README.md.
TESTS += tests/fuzz/fuzz.sh
EXTRA_DIST += tests/fuzz/fuzz.sh tests/fuzz/fuzz.py tests/fuzz/mutate.py tests/fuzz/lsan.supp tests/fuzz/README.md
