/* test_capture_ring.c: the ring layer of libgtrace.so (ring.c) on a region
 * in this process's memory, read here as the launcher reads it: which ring a
 * thread takes, where its records go, what is counted when there is no room. */
#include "config.h"

#include "gt_test.h"
#include "ring.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RING_BYTES (56 * 1024) /* not a power of two: rings are any whole pages */
#define N_RINGS 4

static void *mem;
static gt_ring_layout layout;

static gt_shm_header *header(void)
{
    return mem;
}

static gt_shm_ring *ring_at(uint32_t i)
{
    return (gt_shm_ring *)((char *)mem + sizeof(gt_shm_header)) + i;
}

/* A fresh region of N_RINGS rings, made this process's; capture on. */
static void fresh_region(void)
{
    /* A new region takes the capture window's gate from the one before
     * (a fork child's from its parent's, still mapped): point it away from
     * the region freed here. */
    static _Atomic uint64_t gate_between_regions;
    gt_cap_gate = &gate_between_regions;
    free(mem);
    layout = gt_ring_layout_of(RING_BYTES, (size_t)N_RINGS * RING_BYTES);
    mem = aligned_alloc(4096, layout.total_bytes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mem);
    memset(mem, 0, layout.total_bytes);
    gt_ring_region_init(mem, &layout, 0, 0, false, true, "test", 5, -1);
    atomic_store(&gt_cap_active, 1);
}

typedef struct writer_job {
    int n_records;       /* records to try */
    int bytes;           /* each record's size (0: 80) */
    int n_written;       /* reserved and committed */
    int32_t tid;
} writer_job;

/* A thread that writes `n_records` records (the first takes its ring). */
static void *writer(void *arg)
{
    writer_job *job = arg;
    job->tid = (int32_t)syscall(SYS_gettid);
    for (int i = 0; i < job->n_records; i++) {
        uint64_t *body = gt_cap_reserve(REC_EVENT, job->bytes ? (size_t)job->bytes : 80, 0, GT_EV_NVTX);
        if (!body)
            continue;
        body[1] = (uint64_t)i;
        gt_cap_commit();
        job->n_written++;
    }
    return NULL;
}

static void run_writer(writer_job *job)
{
    pthread_t t;
    CU_ASSERT_FATAL(pthread_create(&t, NULL, writer, job) == 0);
    pthread_join(t, NULL);
}

/* A thread counted a ring in n_carved but has not yet marked it taken (it
 * is between the two steps of carving): another thread must carve the next
 * one, not take that one too. Two producers on one ring overwrote each
 * other's records: one thread's events were lost without being counted. */
static void test_capture_ring__carved_ring_not_taken_twice(void)
{
    fresh_region();
    atomic_store(&header()->n_carved, 1); /* ring 0: carved, still UNUSED */
    writer_job job = {.n_records = 3};
    run_writer(&job);
    CU_ASSERT_EQUAL(job.n_written, 3);
    CU_ASSERT_EQUAL(atomic_load(&header()->n_carved), 2);
    CU_ASSERT_EQUAL(atomic_load(&ring_at(0)->state), GT_RING_UNUSED);
    CU_ASSERT_EQUAL(atomic_load(&ring_at(0)->head), 0);
    CU_ASSERT_EQUAL(ring_at(1)->tid, job.tid);
    CU_ASSERT_EQUAL(atomic_load(&ring_at(1)->head), 3 * 80);
}

/* A thread's exit makes its ring DEAD; once the launcher has read it and
 * made it FREE, the next thread takes it and writes on after what was read,
 * under its own id. */
static void test_capture_ring__freed_ring_taken_again(void)
{
    fresh_region();
    writer_job first = {.n_records = 5};
    run_writer(&first);
    CU_ASSERT_EQUAL(atomic_load(&ring_at(0)->state), GT_RING_DEAD);
    uint64_t head = atomic_load(&ring_at(0)->head);
    CU_ASSERT_EQUAL(head, 5 * 80);
    /* The launcher reads it to its end and frees it. */
    atomic_store(&ring_at(0)->tail, head);
    atomic_store(&ring_at(0)->state, GT_RING_FREE);
    writer_job second = {.n_records = 2};
    run_writer(&second);
    CU_ASSERT_EQUAL(atomic_load(&header()->n_carved), 1);
    CU_ASSERT_EQUAL(ring_at(0)->tid, second.tid);
    CU_ASSERT_EQUAL(atomic_load(&ring_at(0)->generation), 2);
    CU_ASSERT_EQUAL(atomic_load(&ring_at(0)->head), head + 2 * 80);
}

/* A ring nobody reads fills up: every record is either in it or counted
 * as dropped under its kind, and none crosses the ring's end. */
static void test_capture_ring__full_ring_counts_every_drop(void)
{
    fresh_region();
    writer_job job = {.n_records = 2000};
    run_writer(&job);
    int64_t dropped = atomic_load(&ring_at(0)->dropped[GT_EV_NVTX]);
    CU_ASSERT_EQUAL(job.n_written + dropped, 2000);
    CU_ASSERT_EQUAL((uint64_t)job.n_written * 80, atomic_load(&ring_at(0)->head));
    CU_ASSERT(atomic_load(&ring_at(0)->head) <= RING_BYTES);
    CU_ASSERT(atomic_load(&ring_at(0)->head) > RING_BYTES - 80);
}

/* With the launcher reading as it goes, records wrap around: a record that
 * would cross the end is put at the start, after a REC_PAD to the end. */
static void test_capture_ring__records_never_cross_the_end(void)
{
    fresh_region();
    writer_job first = {.n_records = 716}; /* 57,280 bytes of 57,344 */
    run_writer(&first);
    atomic_store(&ring_at(0)->tail, atomic_load(&ring_at(0)->head));
    atomic_store(&ring_at(0)->state, GT_RING_FREE);
    writer_job second = {.n_records = 100};
    run_writer(&second);
    CU_ASSERT_EQUAL(second.n_written, 100);
    const char *data = (const char *)mem + layout.data_offset;
    uint64_t at = 716 * 80;
    int n_records = 0, n_pads = 0;
    for (uint64_t end = atomic_load(&ring_at(0)->head); at < end;) {
        const rec_hdr *h = (const rec_hdr *)(data + at % RING_BYTES);
        CU_ASSERT_FATAL(h->size_bytes >= 8 && at % RING_BYTES + h->size_bytes <= RING_BYTES);
        if (h->type == REC_PAD)
            n_pads++;
        else
            n_records++;
        at += h->size_bytes;
    }
    CU_ASSERT_EQUAL(n_records, 100);
    CU_ASSERT_EQUAL(n_pads, 1);
}

/* Records that end exactly at the ring's end: the next one starts at its
 * beginning, with no pad (the producer's offset wraps to 0). */
static void test_capture_ring__records_end_exactly_at_the_end(void)
{
    fresh_region();
    writer_job first = {.n_records = RING_BYTES / 64, .bytes = 64};
    run_writer(&first);
    CU_ASSERT_EQUAL(first.n_written, RING_BYTES / 64);
    atomic_store(&ring_at(0)->tail, atomic_load(&ring_at(0)->head));
    atomic_store(&ring_at(0)->state, GT_RING_FREE);
    writer_job second = {.n_records = 10, .bytes = 64};
    run_writer(&second);
    CU_ASSERT_EQUAL(second.n_written, 10);
    CU_ASSERT_EQUAL(atomic_load(&ring_at(0)->head), (uint64_t)RING_BYTES + 640);
    const char *data = (const char *)mem + layout.data_offset;
    for (int i = 0; i < 10; i++) {
        const rec_hdr *h = (const rec_hdr *)(data + 64 * i);
        CU_ASSERT_EQUAL(h->type, REC_EVENT);
        CU_ASSERT_EQUAL(((const uint64_t *)h)[1], (uint64_t)i);
    }
}

/* A record that must wrap needs its pad as well as its own bytes: with the
 * launcher one record behind the producer's end (144 bytes free: the 64 to
 * the end and the 80 it read), a 120-byte record does not fit and is counted
 * as dropped; written at the start it would overwrite the unread record at
 * offset 80. */
static void test_capture_ring__wrapping_record_counts_its_pad(void)
{
    fresh_region();
    writer_job first = {.n_records = 716}; /* 57,280 bytes of 57,344: 64 to the end */
    run_writer(&first);
    atomic_store(&ring_at(0)->tail, 80); /* the launcher has read one record */
    atomic_store(&ring_at(0)->state, GT_RING_FREE);
    writer_job second = {.n_records = 1, .bytes = 120};
    run_writer(&second);
    CU_ASSERT_EQUAL(second.n_written, 0);
    CU_ASSERT_EQUAL(atomic_load(&ring_at(0)->dropped[GT_EV_NVTX]), 1);
    CU_ASSERT_EQUAL(atomic_load(&ring_at(0)->head), 716 * 80);
    const rec_hdr *unread = (const rec_hdr *)((const char *)mem + layout.data_offset + 80);
    CU_ASSERT_EQUAL(unread->type, REC_EVENT);
    CU_ASSERT_EQUAL(((const uint64_t *)unread)[1], 1);
}

/* More threads than rings: the ones without a ring count their events in
 * the region's orphan counts. */
static void test_capture_ring__threads_beyond_the_cap_count_drops(void)
{
    fresh_region();
    writer_job jobs[N_RINGS + 2];
    pthread_t t[N_RINGS + 2];
    for (int i = 0; i < N_RINGS + 2; i++)
        jobs[i] = (writer_job){.n_records = 10};
    /* Nobody reads or frees their rings here: each thread carves one. */
    for (int i = 0; i < N_RINGS + 2; i++)
        CU_ASSERT_FATAL(pthread_create(&t[i], NULL, writer, &jobs[i]) == 0);
    for (int i = 0; i < N_RINGS + 2; i++)
        pthread_join(t[i], NULL);
    int64_t written = 0;
    for (int i = 0; i < N_RINGS + 2; i++)
        written += jobs[i].n_written;
    int64_t orphan = atomic_load(&header()->orphan_dropped[GT_EV_NVTX]);
    CU_ASSERT_EQUAL(written + orphan, (N_RINGS + 2) * 10);
    CU_ASSERT_EQUAL(atomic_load(&header()->n_carved), N_RINGS);
}

static void *take_ring(void *arg)
{
    *(bool *)arg = gt_cap_ring_take();
    return NULL;
}

/* gt_cap_ring_take says whether a thread has a ring, taking one if it can:
 * what a layer asks before it keeps state for the thread (nvtx.c's stack). */
static void test_capture_ring__take_says_whether_a_ring_is_had(void)
{
    fresh_region();
    bool got = false;
    pthread_t t;
    CU_ASSERT_FATAL(pthread_create(&t, NULL, take_ring, &got) == 0);
    pthread_join(t, NULL);
    CU_ASSERT(got);
    CU_ASSERT_EQUAL(atomic_load(&header()->n_carved), 1);
    CU_ASSERT_EQUAL(atomic_load(&ring_at(0)->state), GT_RING_DEAD); /* its thread has exited */
    atomic_store(&header()->n_carved, N_RINGS); /* every ring taken */
    got = true;
    CU_ASSERT_FATAL(pthread_create(&t, NULL, take_ring, &got) == 0);
    pthread_join(t, NULL);
    CU_ASSERT(!got);
    atomic_store(&gt_cap_active, 0); /* capture off: no ring either */
    atomic_store(&header()->n_carved, 0);
    got = true;
    CU_ASSERT_FATAL(pthread_create(&t, NULL, take_ring, &got) == 0);
    pthread_join(t, NULL);
    CU_ASSERT(!got);
    CU_ASSERT_EQUAL(atomic_load(&header()->n_carved), 0);
}

static const gt_test_case cases[] = {
    {"test_capture_ring__carved_ring_not_taken_twice", test_capture_ring__carved_ring_not_taken_twice},
    {"test_capture_ring__freed_ring_taken_again", test_capture_ring__freed_ring_taken_again},
    {"test_capture_ring__full_ring_counts_every_drop", test_capture_ring__full_ring_counts_every_drop},
    {"test_capture_ring__records_never_cross_the_end", test_capture_ring__records_never_cross_the_end},
    {"test_capture_ring__records_end_exactly_at_the_end", test_capture_ring__records_end_exactly_at_the_end},
    {"test_capture_ring__wrapping_record_counts_its_pad", test_capture_ring__wrapping_record_counts_its_pad},
    {"test_capture_ring__threads_beyond_the_cap_count_drops", test_capture_ring__threads_beyond_the_cap_count_drops},
    {"test_capture_ring__take_says_whether_a_ring_is_had", test_capture_ring__take_says_whether_a_ring_is_had},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"capture_ring", cases}};
    int rc = gt_test_main(argc, argv, suites, 1);
    free(mem);
    return rc;
}
