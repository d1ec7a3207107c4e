/* pre_regex.c - a small backtracking regex engine for the pre-tokenizer regexes that have no
 * hand-written splitter (see pre_regex.h for the rules it follows): the machine that runs the
 * instructions of pre_regex_compile.c, with its own stack instead of recursion so that long words
 * cannot exhaust the C stack, and the split of words by a regex as llama.cpp splits them. */
#include <stdlib.h>
#include <string.h>

#include "pre_regex_internal.h"
#include "unicode.h"

/* ------------------------------------------------------------------------------------------ */
/* Matching                                                                                   */

static bool class_matches(const char_class *c, uint32_t unit)
{
    bool in;
    if (unit < 256) {
        in = (c->low[unit >> 3] >> (unit & 7)) & 1;
    } else {
        in = c->all_high;
        for (int i = 0; i < c->n_ranges && !in; i++) {
            in = unit >= c->ranges[i][0] && unit <= c->ranges[i][1];
        }
    }
    return in != c->negated;
}

/* A backtracking point: resume at pc with pos; for a greedy run, also give back one unit at a
 * time down to `floor`. */
typedef struct backtrack {
    int32_t pc;
    uint32_t pos;
    uint32_t floor; /* UINT32_MAX for a plain alternative */
} backtrack;

typedef struct machine {
    const pre_regex *re;
    const uint32_t *units;
    size_t end;
    backtrack *stack;
    size_t depth, cap;
    bool oom;
} machine;

static bool push(machine *m, int32_t pc, size_t pos, uint32_t floor)
{
    if (m->depth == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        backtrack *grown = realloc(m->stack, cap * sizeof *grown);
        if (!grown) {
            m->oom = true;
            return false;
        }
        m->stack = grown;
        m->cap = cap;
    }
    m->stack[m->depth++] = (backtrack){pc, (uint32_t)pos, floor};
    return true;
}

/* Run from instruction pc at pos; the end of the first match in priority order, or -1. With
 * `not_null`, a match that ends where it started does not count. */
static long run(machine *m, int32_t pc, size_t pos, bool not_null)
{
    const size_t base = m->depth, start = pos;
    const inst *insts = m->re->insts;
    for (;;) {
        const inst *in = &insts[pc];
        bool ok = true;
        switch (in->op) {
        case I_CLASS:
            ok = pos < m->end && class_matches(&m->re->classes[in->a], m->units[pos]);
            pos++;
            pc++;
            break;
        case I_RUN: {
            const char_class *c = &m->re->classes[in->a];
            size_t k = 0;
            while (pos + k < m->end && (in->max == UNBOUNDED || k < (size_t)in->max) && class_matches(c, m->units[pos + k])) {
                k++;
            }
            ok = k >= (size_t)in->min;
            if (ok && k > (size_t)in->min) {
                ok = push(m, pc + 1, pos + k - 1, (uint32_t)(pos + (size_t)in->min));
            }
            pos += k;
            pc++;
            break;
        }
        case I_SPLIT:
            ok = push(m, in->b, pos, UINT32_MAX);
            pc = in->a;
            break;
        case I_JMP:
            pc = in->a;
            break;
        case I_EOL:
            ok = pos == m->end;
            pc++;
            break;
        case I_LOOK: {
            bool found = run(m, in->a, pos, false) >= 0;
            ok = found != (bool)in->negative && !m->oom;
            pc = in->b;
            break;
        }
        case I_MATCH:
            if (!(not_null && pos == start)) {
                m->depth = base;
                return (long)pos;
            }
            ok = false;
            break;
        }
        if (ok) {
            continue;
        }
        if (m->depth == base || m->oom) {
            m->depth = base;
            return -1;
        }
        backtrack *b = &m->stack[m->depth - 1];
        pc = b->pc;
        pos = b->pos;
        if (b->floor != UINT32_MAX && b->pos > b->floor) {
            b->pos--; /* the run can still give back more */
        } else {
            m->depth--;
        }
    }
}

/* The leftmost match at or after `from` within [.., m->end): its start in *ms and end in *me. */
static bool search(machine *m, size_t from, size_t *ms, size_t *me)
{
    for (size_t s = from; s <= m->end && !m->oom; s++) {
        long e = run(m, 0, s, false);
        if (e >= 0) {
            *ms = s;
            *me = (size_t)e;
            return true;
        }
    }
    return false;
}

/* The unit the matcher sees for a code point of class `cls`. */
static uint32_t unit_of(bool collapsed, uint32_t cp, unsigned cls)
{
    if (cp < 0x80) {
        return cp;
    }
    if (inf_unicode_is_space(cls)) {
        return 0x0B;
    }
    if (!collapsed) {
        return cp;
    }
    switch (cls & INF_UNICODE_MAJOR_MASK) {
    case INF_UNICODE_NUMBER: return 0xD1;
    case INF_UNICODE_LETTER: return 0xD2;
    case INF_UNICODE_PUNCTUATION: return 0xD3;
    case INF_UNICODE_MARK: return 0xD4;
    case INF_UNICODE_SYMBOL: return 0xD5;
    default: return 0xD0;
    }
}

/* Split one word [ws, we) as std::regex_iterator walks it: after an empty match the next match
 * must be non-empty at the same place, or is searched from one further on. */
static size_t split_word(machine *m, size_t ws, size_t we, uint32_t *out)
{
    size_t count = 0, gap_start = ws, ms, me;
    m->end = we;
    bool found = search(m, ws, &ms, &me);
    while (found) {
        if (ms > gap_start) {
            out[count++] = (uint32_t)(ms - gap_start);
        }
        if (me > ms) {
            out[count++] = (uint32_t)(me - ms);
        }
        gap_start = me;
        if (me > ms) {
            found = search(m, me, &ms, &me);
            continue;
        }
        if (ms == we) {
            break;
        }
        long e = run(m, 0, ms, true);
        if (e >= 0) {
            me = (size_t)e;
            continue;
        }
        found = search(m, ms + 1, &ms, &me);
    }
    if (we > gap_start) {
        out[count++] = (uint32_t)(we - gap_start);
    }
    return count;
}

size_t pre_regex_split(const pre_regex *re, const uint32_t *cps, const uint8_t *cls, size_t n,
                       const uint32_t *in_lengths, size_t n_in, uint32_t *out)
{
    machine m = {.re = re};
    uint32_t *units = malloc((n ? n : 1) * sizeof *units);
    if (!units) {
        return (size_t)-1;
    }
    for (size_t i = 0; i < n; i++) {
        units[i] = unit_of(re->collapsed, cps[i], cls[i]);
    }
    m.units = units;
    size_t count = 0, start = 0;
    for (size_t w = 0; w < n_in && !m.oom; w++) {
        count += split_word(&m, start, start + in_lengths[w], out + count);
        start += in_lengths[w];
    }
    free(units);
    free(m.stack);
    return m.oom ? (size_t)-1 : count;
}
