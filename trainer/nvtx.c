/* nvtx.c: ranges in the "trainer" domain. Op names are static strings and
 * are registered once (nvtxDomainRegisterStringA), so a tool sees one string
 * id per op instead of a copy per call. */
#include "nvtx.h"

#include <pthread.h>
#include <string.h>

#ifdef HAVE_NVTX
static tr_nvtx_domain_t domain;
static pthread_once_t domain_once = PTHREAD_ONCE_INIT;

static void make_domain(void) { domain = nvtxDomainCreateA("trainer"); }

tr_nvtx_domain_t tr_nvtx_domain(void)
{
    pthread_once(&domain_once, make_domain);
    return domain;
}

void tr_nvtx_push(const char *name)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    nvtxDomainRangePushEx(tr_nvtx_domain(), &a);
}

/* A small table of registered strings, keyed by the string's address. */
enum { N_REG = 64 };
static struct { const char *name; nvtxStringHandle_t handle; } reg[N_REG];
static int n_reg;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

static nvtxStringHandle_t registered(const char *name)
{
    nvtxStringHandle_t h = NULL;
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < n_reg && !h; i++)
        if (reg[i].name == name)
            h = reg[i].handle;
    if (!h) {
        h = nvtxDomainRegisterStringA(tr_nvtx_domain(), name);
        if (h && n_reg < N_REG) {
            reg[n_reg].name = name;
            reg[n_reg++].handle = h;
        }
    }
    pthread_mutex_unlock(&reg_lock);
    return h;
}

void tr_nvtx_push_static(const char *name)
{
    nvtxStringHandle_t h = registered(name);
    if (!h) { /* no tool attached, or the table is full */
        tr_nvtx_push(name);
        return;
    }
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = h;
    nvtxDomainRangePushEx(tr_nvtx_domain(), &a);
}

void tr_nvtx_pop(void) { nvtxDomainRangePop(tr_nvtx_domain()); }

#else
tr_nvtx_domain_t tr_nvtx_domain(void) { return NULL; }
void tr_nvtx_push(const char *name) { (void)name; }
void tr_nvtx_push_static(const char *name) { (void)name; }
void tr_nvtx_pop(void) {}
#endif
