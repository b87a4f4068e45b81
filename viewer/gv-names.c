/* gv-names.c: short kernel names (see gv-names.h). A small scanner over the
 * demangler's output that counts brackets; it does not parse C++: a name it
 * cannot shorten comes back whole. */
#include "gv-names.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const char ANON[] = "(anonymous namespace)";

static int opens(char c) { return c == '<' || c == '(' || c == '['; }
static int closes(char c) { return c == '>' || c == ')' || c == ']'; }

/* The end of the bracketed run that opens at s[0]. */
static size_t match(const char *s, size_t n)
{
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        depth += opens(s[i]) - closes(s[i]);
        if (depth == 0)
            return i + 1;
    }
    return n;
}

/* Where, in s[0..n), the first top-level c is (n: none). "(anonymous
 * namespace)" counts as a word, not as brackets. */
static size_t find_top(const char *s, size_t n, const char *cs)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '(' && strncmp(s + i, ANON, sizeof ANON - 1) == 0) {
            i += sizeof ANON - 2;
            continue;
        }
        if (strchr(cs, s[i]))
            return i;
        if (opens(s[i]))
            i += match(s + i, n - i) - 1;
    }
    return n;
}

/* The last top-level "::" in s[0..n), as the index past it (0: none). */
static size_t after_scope(const char *s, size_t n)
{
    size_t at = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        if (opens(s[i]) && !(s[i] == '(' && strncmp(s + i, ANON, sizeof ANON - 1) == 0)) {
            i += match(s + i, n - i) - 1;
            continue;
        }
        if (s[i] == ':' && s[i + 1] == ':')
            at = i + 2;
    }
    return at;
}

/* A template argument's name: to its first bracket, without scopes,
 * qualifiers and spaces; 0 when it names nothing (a number, a lambda). */
static size_t arg_name(const char *s, size_t n, const char **out)
{
    while (n > 0 && isspace((unsigned char)*s))
        s++, n--;
    static const char *const quals[] = {"const ", "struct ", "class ", "enum "};
    for (size_t q = 0; q < sizeof quals / sizeof quals[0]; q++)
        if (n > strlen(quals[q]) && strncmp(s, quals[q], strlen(quals[q])) == 0)
            s += strlen(quals[q]), n -= strlen(quals[q]);
    size_t end = find_top(s, n, "<([ *&");
    size_t from = after_scope(s, end);
    s += from;
    end -= from;
    if (end == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_') || (end == 4 && strncmp(s, "true", 4) == 0) ||
        (end == 5 && strncmp(s, "false", 5) == 0))
        return 0;
    *out = s;
    return end;
}

char *gv_short_kernel_name(char *out, size_t n, const char *full)
{
    if (n == 0)
        return out;
    size_t len = strlen(full);
    size_t name_end = find_top(full, len, "(");
    /* With arguments, a return type may come first: it ends at the last
     * top-level space before the name. */
    size_t name_start = 0;
    for (size_t i = 0; name_end < len && i < name_end; i++) {
        if (full[i] == '(' && strncmp(full + i, ANON, sizeof ANON - 1) == 0) {
            i += sizeof ANON - 2;
            continue;
        }
        if (opens(full[i]))
            i += match(full + i, name_end - i) - 1;
        else if (full[i] == ' ')
            name_start = i + 1;
    }
    const char *name = full + name_start;
    size_t name_n = name_end - name_start;
    size_t base = after_scope(name, name_n);
    size_t targs = base + find_top(name + base, name_n - base, "<");
    const char *arg = NULL;
    size_t arg_n = 0;
    if (targs < name_n) { /* the first argument that names something */
        size_t close = targs + match(name + targs, name_n - targs) - 1, i = targs + 1;
        while (i < close && arg_n == 0) {
            size_t comma = i + find_top(name + i, close - i, ",");
            arg_n = arg_name(name + i, comma - i, &arg);
            i = comma + 1;
        }
    }
    int k = arg_n ? snprintf(out, n, "%.*s<%.*s>", (int)(targs - base), name + base, (int)arg_n, arg)
                  : snprintf(out, n, "%.*s", (int)(targs - base), name + base);
    if (k <= 0 || targs == base) /* nothing left of it: the name as given */
        snprintf(out, n, "%s", full);
    return out;
}
