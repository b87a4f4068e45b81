# Mutation testing (tests/mutation/README.md): `make mutation` runs every
# mutant of tests/mutation/mutants.txt against the tests of its area, in a
# copy of the tree (_build-mut/ beside the sources); MUTATION_FLAGS passes
# options (--area analyze, --sample 5 --seed COMMIT, --budget SECONDS).
EXTRA_DIST += tests/mutation/README.md tests/mutation/mutants.txt tests/mutation/run.py
.PHONY: mutation
mutation:
	python3 $(top_srcdir)/tests/mutation/run.py $(MUTATION_FLAGS)

# Tests written against the list's survivors: values at the boundaries
# (nanosecond of a free, a step's end), fixtures that combine features
# (device allocations beside a caching allocator; resumed, nested steps).
if HAVE_CUNIT
check_PROGRAMS += tests/unit/test_analyze_edges
TESTS += tests/unit/test_analyze_edges
tests_unit_test_analyze_edges_SOURCES = tests/unit/test_analyze_edges.c tests/unit/analyze_fixture.h
tests_unit_test_analyze_edges_CPPFLAGS = $(ANALYZE_CPPFLAGS)
tests_unit_test_analyze_edges_CFLAGS = $(ANALYZE_TEST_CFLAGS)
tests_unit_test_analyze_edges_LDADD = $(ANALYZE_TEST_LDADD)
endif
if HAVE_CUNIT
check_PROGRAMS += tests/unit/test_import_values
TESTS += tests/unit/test_import_values
tests_unit_test_import_values_SOURCES = tests/unit/test_import_values.c
tests_unit_test_import_values_CPPFLAGS = $(STORE_CPPFLAGS)
tests_unit_test_import_values_CFLAGS = $(IMPORT_TEST_CFLAGS)
tests_unit_test_import_values_LDADD = $(IMPORT_TEST_LDADD)
endif
TESTS += tests/integration/import_snapshot_edges.sh
EXTRA_DIST += tests/integration/import_snapshot_edges.sh
if HAVE_CUNIT
check_PROGRAMS += tests/unit/test_store_edges
TESTS += tests/unit/test_store_edges
tests_unit_test_store_edges_SOURCES = tests/unit/test_store_edges.c
tests_unit_test_store_edges_CPPFLAGS = $(STORE_CPPFLAGS)
tests_unit_test_store_edges_CFLAGS = $(STORE_TEST_CFLAGS)
tests_unit_test_store_edges_LDADD = $(STORE_TEST_LDADD)
endif
if HAVE_CUNIT
check_PROGRAMS += tests/unit/test_store_limits
TESTS += tests/unit/test_store_limits
tests_unit_test_store_limits_SOURCES = tests/unit/test_store_limits.c
tests_unit_test_store_limits_CPPFLAGS = $(STORE_CPPFLAGS)
tests_unit_test_store_limits_CFLAGS = $(STORE_TEST_CFLAGS)
tests_unit_test_store_limits_LDADD = $(STORE_TEST_LDADD)
endif
