/* report_kept.c: the default report (gtrace report, no option) computed once
 * when a trace is finished and kept in it as text and JSON, so `gtrace
 * report` on a big trace prints it without loading the model. The same
 * analysis and the same renderers make it (into memory); the store decides
 * whether the file is still what it was (gt_trace_summary). It computes
 * and renders nothing of its own.
 *
 * The trace's path is the one part of the output the file does not say (a
 * trace is copied, renamed, named relative to another folder): the kept
 * bodies are rendered with an empty path, and the path is put back in as
 * the renderer itself writes it, learnt from rendering an empty report
 * with and without it. */
#include "config.h"

#include "analyze_int.h"

#include <stdlib.h>
#include <string.h>

#define KEY_TEXT "report.text"
#define KEY_JSON "report.json"

extern const char gt_analysis_sources_id[]; /* analysis_id.c, made by make */

const char *gt_report_kept_version(void)
{
    static char version[96];
    if (!version[0])
        snprintf(version, sizeof version, "%s+%s", PACKAGE_VERSION, gt_analysis_sources_id);
    return version;
}

/* r rendered (text or JSON) into a malloc'd buffer. */
static int render(const gt_report *r, bool json, char **out, size_t *out_bytes)
{
    FILE *f = open_memstream(out, out_bytes);
    if (!f)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    int rc = json ? gt_report_print_json(r, f) : gt_report_print_text(r, f);
    if (fclose(f) != 0 || rc != 0) {
        free(*out);
        *out = NULL;
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory while rendering the report");
    }
    return 0;
}

int gt_report_keep(const char *path)
{
    gt_trace *t = NULL;
    gt_report *r = NULL;
    an_model *m = NULL;
    gt_report_options opt;
    char *text = NULL, *json = NULL, *whole = NULL;
    size_t n_text = 0, n_json = 0, n_whole = 0;
    an_whole w;
    int rc;
    gt_report_options_init(&opt); /* what `gtrace report` computes without options */
    if ((rc = gt_trace_open(&t, path, GT_OPEN_CHECK_LATER)) < 0 || (rc = an_model_load(&m, t)) < 0 ||
        (rc = an_report_build(&r, m, &opt, NULL, NULL)) < 0)
        goto cleanup;
    /* the facts a window of steps reads beside its rows (report_window.c) */
    if (an_whole_of(&w, m, r) && (rc = an_whole_text(&whole, &n_whole, &w)) < 0)
        goto cleanup;
    an_model_free(m);
    m = NULL;
    char *own_path = r->path;
    r->path = "";
    rc = render(r, false, &text, &n_text);
    if (rc == 0)
        rc = render(r, true, &json, &n_json);
    r->path = own_path;
    if (rc < 0)
        goto cleanup;
    gt_trace_free(t); /* before writing: the file changes under a reader */
    t = NULL;
    const char *keys[] = {KEY_TEXT, KEY_JSON, an_whole_key()};
    const void *bodies[] = {text, json, whole};
    const size_t sizes[] = {n_text, n_json, n_whole};
    rc = gt_trace_add_summary(path, gt_report_kept_version(), keys, bodies, sizes, whole ? 3 : 2);
cleanup:
    free(text);
    free(json);
    free(whole);
    an_model_free(m);
    gt_report_free(r);
    gt_trace_free(t);
    return rc;
}

/* Length of the common prefix of a[0..na) and b[0..nb). */
static size_t common_prefix(const char *a, size_t na, const char *b, size_t nb)
{
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i])
        i++;
    return i;
}

int gt_report_print_kept(gt_trace *t, bool json, FILE *f)
{
    char *body = NULL, *bare = NULL, *named = NULL;
    size_t n_body = 0, n_bare = 0, n_named = 0;
    /* an empty report, rendered without and with the path, shows where the path goes */
    gt_report empty = {.path = "", .origin = gt_trace_origin_of(t), .steps_note = ""};
    int rc = gt_trace_summary(t, json ? KEY_JSON : KEY_TEXT, gt_report_kept_version(), (void **)&body, &n_body);
    if (rc == 0)
        rc = render(&empty, json, &bare, &n_bare);
    empty.path = (char *)gt_trace_path(t);
    if (rc == 0)
        rc = render(&empty, json, &named, &n_named);
    if (rc < 0)
        goto cleanup;
    /* named = bare[0..k) + the path as rendered + bare[k..): where the bodies
     * agree with bare up to k, the path goes in at k */
    size_t k = common_prefix(bare, n_bare, named, n_named), n_path = n_named - n_bare;
    if (n_named < n_bare || memcmp(named + k + n_path, bare + k, n_bare - k) != 0 || n_body < k ||
        memcmp(body, bare, k) != 0) {
        rc = gt_error_set(GT_ERR_VERSION, "%s: its kept report is not laid out as this build renders one",
                          gt_trace_path(t));
        goto cleanup;
    }
    if (fwrite(body, 1, k, f) != k || fwrite(named + k, 1, n_path, f) != n_path ||
        fwrite(body + k, 1, n_body - k, f) != n_body - k)
        rc = gt_error_set(GT_ERR_IO, "cannot write the report");
cleanup:
    free(body);
    free(bare);
    free(named);
    return rc;
}

int gt_report_kept_state(gt_trace *t)
{
    void *body = NULL;
    size_t n = 0;
    int rc = gt_trace_summary(t, KEY_TEXT, gt_report_kept_version(), &body, &n);
    free(body);
    return rc;
}

bool an_whole_read(an_whole *w, gt_trace *t)
{
    char *body = NULL;
    size_t n = 0;
    if (gt_trace_summary(t, an_whole_key(), gt_report_kept_version(), (void **)&body, &n) < 0)
        return false;
    bool ok = an_whole_parse(w, body, n);
    free(body);
    return ok;
}

/* A report of steps from the window alone, where the close kept the
 * whole-trace facts (report_window.c); *out_read false: read the whole. */
int gt_report_compute_window(gt_report **out, bool *out_read, gt_trace *t, const gt_report_options *opt)
{
    an_whole w;
    an_model *m = NULL;
    *out = NULL;
    *out_read = false;
    if (!t || !opt || (opt->step_first < 0 && opt->step_last < 0))
        return 0;
    /* no facts (or another build's, or a changed file's): the whole model */
    if (!an_whole_read(&w, t))
        return 0;
    int rc = an_model_load_window(&m, t, &w, opt);
    if (rc == 0)
        rc = an_report_build(out, m, opt, NULL, NULL);
    an_model_free(m);
    *out_read = rc == 0;
    return rc;
}
