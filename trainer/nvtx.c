/* nvtx.c: ranges in the "trainer" domain. Op names are static strings and
 * are registered once (nvtxDomainRegisterStringA), so a tool sees one string
 * id per op instead of a copy per call. Op ranges carry the category
 * TR_NVTX_COMPUTE, named "compute" when the domain is created. Without a tool
 * the domain is NULL and static and op ranges skip the registration lock. */
#include "nvtx.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#ifdef HAVE_NVTX
static tr_nvtx_domain_t domain;
static pthread_once_t domain_once = PTHREAD_ONCE_INIT;

static void make_domain(void)
{
    domain = nvtxDomainCreateA("trainer");
    if (domain) {
        nvtxDomainNameCategoryA(domain, TR_NVTX_COMPUTE, "compute");
        nvtxDomainNameCategoryA(domain, TR_NVTX_COMMUNICATION, "communication");
    }
}

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

static void push_registered(const char *name, uint32_t category)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = category;
    /* no domain: no tool (the push is a no-op stub), so no registration either */
    nvtxStringHandle_t h = tr_nvtx_domain() ? registered(name) : NULL;
    if (h) {
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = h;
    } else { /* no tool, or the table is full */
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = name;
    }
    nvtxDomainRangePushEx(tr_nvtx_domain(), &a);
}

void tr_nvtx_push_static(const char *name) { push_registered(name, 0); }
void tr_nvtx_push_op(const char *name) { push_registered(name, TR_NVTX_COMPUTE); }

void tr_nvtx_pop(void) { nvtxDomainRangePop(tr_nvtx_domain()); }

uint64_t tr_nvtx_start_comm(const char *name, uint64_t bytes)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = TR_NVTX_COMMUNICATION;
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = bytes;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    return nvtxDomainRangeStartEx(tr_nvtx_domain(), &a);
}

void tr_nvtx_end(uint64_t id) { nvtxDomainRangeEnd(tr_nvtx_domain(), id); }

void tr_nvtx_mark_value(const char *name, double value)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
    a.payload.dValue = value;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    nvtxDomainMarkEx(tr_nvtx_domain(), &a);
}

#else
tr_nvtx_domain_t tr_nvtx_domain(void) { return NULL; }
void tr_nvtx_push(const char *name) { (void)name; }
void tr_nvtx_push_static(const char *name) { (void)name; }
void tr_nvtx_push_op(const char *name) { (void)name; }
void tr_nvtx_pop(void) {}
uint64_t tr_nvtx_start_comm(const char *name, uint64_t bytes) { (void)name; (void)bytes; return 0; }
void tr_nvtx_end(uint64_t id) { (void)id; }
void tr_nvtx_mark_value(const char *name, double value) { (void)name; (void)value; }
#endif
