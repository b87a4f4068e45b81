/* trainer_fixture.h: a small GPT on the CPU backend for the trainer's unit
 * suites, and deterministic token batches. Header-only; each suite includes
 * it once. */
#ifndef TR_TEST_TRAINER_FIXTURE_H
#define TR_TEST_TRAINER_FIXTURE_H

#include "error.h"
#include "gpt.h"
#include "gt_test.h"

typedef struct fixture {
    tr_backend *be;
    tr_alloc *alloc;
    tr_gpt *m;
} fixture;

/* A 2-layer model of the given width and context on bytes, weights from seed. */
static inline void fixture_setup(fixture *f, int channels, int max_seq_len, uint64_t seed)
{
    tr_gpt_config c = {.max_seq_len = max_seq_len, .vocab_size = 256, .n_layers = 2, .n_heads = 2,
                       .channels = channels};
    tr_gpt_config_finish(&c);
    f->be = tr_backend_cpu(0);
    CU_ASSERT_EQUAL_FATAL(tr_alloc_new(&f->alloc, &f->be->mem, 0), TR_OK);
    CU_ASSERT_EQUAL_FATAL(tr_gpt_new(&f->m, &c, f->be, f->alloc, seed), TR_OK);
}

static inline void fixture_teardown(fixture *f)
{
    tr_gpt_free(f->m);
    tr_alloc_free(f->alloc);
}

/* n inputs and targets, a fixed pattern varied by salt. */
static inline void fixture_tokens(int32_t *in, int32_t *tg, int n, unsigned salt)
{
    for (int i = 0; i < n; i++) {
        in[i] = (int32_t)((i * 37u + salt * 11u) % 256);
        tg[i] = (int32_t)((i * 53u + salt * 7u + 1) % 256);
    }
}

#endif
