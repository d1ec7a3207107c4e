/* pre_regex.c - a small backtracking regex engine for the pre-tokenizer regexes that have no
 * hand-written splitter (see pre_regex.h for the rules it follows). A pattern is parsed into a
 * tree, compiled to instructions, and run by a backtracking machine whose stack replaces
 * recursion, so that long words cannot exhaust the C stack. */
#include "pre_regex.h"

#include <stdlib.h>
#include <string.h>

#include "unicode.h"

enum { MAX_UNITS = 4096, MAX_NODES = 1024, MAX_CLASSES = 128, MAX_RANGES = 256, MAX_INSTS = 8192 };
enum { UNBOUNDED = -1 };

/* A character class: a bitmap for units below 256, ranges above, and "every unit from 256" for
 * the negated escapes (\S \D \W), which only matter when units are code points. */
typedef struct char_class {
    uint8_t low[32];
    bool all_high;
    bool negated;
    int n_ranges;
    uint32_t ranges[MAX_RANGES][2];
} char_class;

typedef enum node_kind { N_CLASS, N_SEQ, N_ALT, N_REPEAT, N_LOOK, N_END } node_kind;

typedef struct node {
    node_kind kind;
    int value;           /* N_CLASS: class index; N_LOOK: 1 when negative */
    int min, max;        /* N_REPEAT */
    int first, next;     /* first child and next sibling, -1 for none */
} node;

typedef enum op { I_CLASS, I_RUN, I_SPLIT, I_JMP, I_EOL, I_LOOK, I_MATCH } op;

typedef struct inst {
    uint8_t op;
    uint8_t negative; /* I_LOOK */
    int32_t a, b;     /* I_CLASS/I_RUN: class; I_SPLIT: preferred, other; I_JMP: target;
                       * I_LOOK: sub-program start, next */
    int32_t min, max; /* I_RUN */
} inst;

struct pre_regex {
    bool collapsed;
    int n_insts;
    inst *insts;
    int n_classes;
    char_class *classes;
};

/* ------------------------------------------------------------------------------------------ */
/* Parsing                                                                                    */

typedef struct parser {
    const uint32_t *u;
    size_t n, pos;
    node nodes[MAX_NODES];
    int n_nodes;
    char_class *classes;
    int n_classes;
    const char *why;
} parser;

static int fail_parse(parser *p, const char *why)
{
    if (!p->why) {
        p->why = why;
    }
    return -1;
}

static int new_node(parser *p, node_kind kind)
{
    if (p->n_nodes == MAX_NODES) {
        return fail_parse(p, "too many regex nodes");
    }
    p->nodes[p->n_nodes] = (node){kind, 0, 0, 0, -1, -1};
    return p->n_nodes++;
}

static int new_class(parser *p)
{
    if (p->n_classes == MAX_CLASSES) {
        return fail_parse(p, "too many character classes");
    }
    memset(&p->classes[p->n_classes], 0, sizeof p->classes[0]);
    return p->n_classes++;
}

static void class_add_range(parser *p, char_class *c, uint32_t lo, uint32_t hi)
{
    for (uint32_t x = lo; x <= hi && x < 256; x++) {
        c->low[x >> 3] |= (uint8_t)(1u << (x & 7));
    }
    if (hi >= 256) {
        if (c->n_ranges == MAX_RANGES) {
            fail_parse(p, "too many ranges in a character class");
            return;
        }
        c->ranges[c->n_ranges][0] = lo < 256 ? 256 : lo;
        c->ranges[c->n_ranges][1] = hi;
        c->n_ranges++;
    }
}

/* Add the units of escape letter `e` (\s \d \w or their negations); false when `e` is not one. */
static bool class_add_escape_set(parser *p, char_class *c, uint32_t e)
{
    char_class set = {0};
    uint32_t lower = e | 0x20;
    if (lower == 's') {
        class_add_range(p, &set, '\t', '\r');
        class_add_range(p, &set, ' ', ' ');
    } else if (lower == 'd') {
        class_add_range(p, &set, '0', '9');
    } else if (lower == 'w') {
        class_add_range(p, &set, '0', '9');
        class_add_range(p, &set, 'A', 'Z');
        class_add_range(p, &set, 'a', 'z');
        class_add_range(p, &set, '_', '_');
    } else {
        return false;
    }
    bool negate = e != lower;
    for (int i = 0; i < 32; i++) {
        c->low[i] |= negate ? (uint8_t)~set.low[i] : set.low[i];
    }
    c->all_high |= negate;
    return true;
}

/* The unit an escape stands for (\r \n \t \f \v \0 or the escaped character itself). */
static uint32_t escaped_unit(uint32_t e)
{
    switch (e) {
    case 'r': return '\r';
    case 'n': return '\n';
    case 't': return '\t';
    case 'f': return '\f';
    case 'v': return '\v';
    case '0': return 0;
    default: return e;
    }
}

static bool is_unsupported_escape(uint32_t e)
{
    return e == 'b' || e == 'B' || e == 'p' || e == 'P' || e == 'x' || e == 'u' || e == 'c' || (e >= '1' && e <= '9');
}

/* [...] after the '['. */
static int parse_bracket(parser *p)
{
    int ci = new_class(p);
    if (ci < 0) {
        return -1;
    }
    char_class *c = &p->classes[ci];
    if (p->pos < p->n && p->u[p->pos] == '^') {
        c->negated = true;
        p->pos++;
    }
    while (p->pos < p->n && p->u[p->pos] != ']') {
        uint32_t lo = p->u[p->pos++];
        if (lo == '\\') {
            if (p->pos >= p->n) {
                return fail_parse(p, "regex ends inside an escape");
            }
            uint32_t e = p->u[p->pos++];
            if (class_add_escape_set(p, c, e)) {
                continue;
            }
            if (is_unsupported_escape(e)) {
                return fail_parse(p, "unsupported escape in a character class");
            }
            lo = escaped_unit(e);
        }
        uint32_t hi = lo;
        if (p->pos + 1 < p->n && p->u[p->pos] == '-' && p->u[p->pos + 1] != ']') {
            p->pos++;
            hi = p->u[p->pos++];
            if (hi == '\\') {
                if (p->pos >= p->n) {
                    return fail_parse(p, "regex ends inside an escape");
                }
                uint32_t e = p->u[p->pos++];
                if (is_unsupported_escape(e) || (e | 0x20) == 's' || (e | 0x20) == 'd' || (e | 0x20) == 'w') {
                    return fail_parse(p, "unsupported range end in a character class");
                }
                hi = escaped_unit(e);
            }
            if (hi < lo) {
                return fail_parse(p, "character range out of order");
            }
        }
        class_add_range(p, c, lo, hi);
    }
    if (p->pos >= p->n) {
        return fail_parse(p, "unterminated character class");
    }
    p->pos++;
    int nd = new_node(p, N_CLASS);
    if (nd >= 0) {
        p->nodes[nd].value = ci;
    }
    return p->why ? -1 : nd;
}

static int single_unit_class(parser *p, uint32_t lo, uint32_t hi, uint32_t escape_set)
{
    int ci = new_class(p);
    int nd = ci < 0 ? -1 : new_node(p, N_CLASS);
    if (nd < 0) {
        return -1;
    }
    if (escape_set) {
        class_add_escape_set(p, &p->classes[ci], escape_set);
    } else {
        class_add_range(p, &p->classes[ci], lo, hi);
    }
    p->nodes[nd].value = ci;
    return nd;
}

static int parse_alternation(parser *p);

static int parse_group(parser *p)
{
    int kind = 0; /* 0 group, 1 lookahead, 2 negative lookahead */
    if (p->pos < p->n && p->u[p->pos] == '?') {
        uint32_t c = p->pos + 1 < p->n ? p->u[p->pos + 1] : 0;
        if (c == ':') {
            kind = 0;
        } else if (c == '=') {
            kind = 1;
        } else if (c == '!') {
            kind = 2;
        } else {
            return fail_parse(p, "unsupported group kind (only (?: (?= (?! are)");
        }
        p->pos += 2;
    }
    int inner = parse_alternation(p);
    if (inner < 0) {
        return -1;
    }
    if (p->pos >= p->n || p->u[p->pos] != ')') {
        return fail_parse(p, "unbalanced parenthesis");
    }
    p->pos++;
    if (kind == 0) {
        return inner;
    }
    int nd = new_node(p, N_LOOK);
    if (nd >= 0) {
        p->nodes[nd].value = kind == 2;
        p->nodes[nd].first = inner;
    }
    return nd;
}

static int parse_atom(parser *p)
{
    uint32_t c = p->u[p->pos++];
    switch (c) {
    case '(':
        return parse_group(p);
    case '[':
        return parse_bracket(p);
    case '$':
        return new_node(p, N_END);
    case '^': case '.': case ')': case '*': case '+': case '?': case '{':
        return fail_parse(p, "unsupported or misplaced regex operator");
    case '\\': {
        if (p->pos >= p->n) {
            return fail_parse(p, "regex ends inside an escape");
        }
        uint32_t e = p->u[p->pos++];
        uint32_t lower = e | 0x20;
        if (lower == 's' || lower == 'd' || lower == 'w') {
            return single_unit_class(p, 0, 0, e);
        }
        if (is_unsupported_escape(e)) {
            return fail_parse(p, "unsupported regex escape");
        }
        uint32_t unit = escaped_unit(e);
        return single_unit_class(p, unit, unit, 0);
    }
    default:
        return single_unit_class(p, c, c, 0);
    }
}

static bool parse_number(parser *p, int *value)
{
    size_t start = p->pos;
    long v = 0;
    while (p->pos < p->n && p->u[p->pos] >= '0' && p->u[p->pos] <= '9' && v < 100000) {
        v = v * 10 + (long)(p->u[p->pos++] - '0');
    }
    *value = (int)v;
    return p->pos > start;
}

/* A quantifier after an atom, if any: sets min/max and returns true. */
static bool parse_quantifier(parser *p, int *min, int *max)
{
    if (p->pos >= p->n) {
        return false;
    }
    uint32_t c = p->u[p->pos];
    if (c == '*' || c == '+' || c == '?') {
        p->pos++;
        *min = c == '+' ? 1 : 0;
        *max = c == '?' ? 1 : UNBOUNDED;
    } else if (c == '{') {
        p->pos++;
        if (!parse_number(p, min)) {
            fail_parse(p, "malformed {n,m} quantifier");
            return false;
        }
        *max = *min;
        if (p->pos < p->n && p->u[p->pos] == ',') {
            p->pos++;
            if (!parse_number(p, max)) {
                *max = UNBOUNDED;
            }
        }
        if (p->pos >= p->n || p->u[p->pos] != '}' || (*max != UNBOUNDED && *max < *min)) {
            fail_parse(p, "malformed {n,m} quantifier");
            return false;
        }
        p->pos++;
    } else {
        return false;
    }
    if (p->pos < p->n && (p->u[p->pos] == '?' || p->u[p->pos] == '+')) {
        fail_parse(p, "lazy and possessive quantifiers are not supported");
        return false;
    }
    return true;
}

static bool nullable(const parser *p, int nd)
{
    const node *n = &p->nodes[nd];
    switch (n->kind) {
    case N_CLASS:
        return false;
    case N_SEQ:
        for (int c = n->first; c >= 0; c = p->nodes[c].next) {
            if (!nullable(p, c)) {
                return false;
            }
        }
        return true;
    case N_ALT:
        for (int c = n->first; c >= 0; c = p->nodes[c].next) {
            if (nullable(p, c)) {
                return true;
            }
        }
        return false;
    case N_REPEAT:
        return n->min == 0 || nullable(p, n->first);
    default:
        return true;
    }
}

static int parse_sequence(parser *p)
{
    int seq = new_node(p, N_SEQ);
    int last = -1;
    while (seq >= 0 && p->pos < p->n && p->u[p->pos] != '|' && p->u[p->pos] != ')') {
        int atom = parse_atom(p);
        int min, max;
        if (atom >= 0 && parse_quantifier(p, &min, &max)) {
            int rep = new_node(p, N_REPEAT);
            if (rep < 0) {
                return -1;
            }
            if ((max == UNBOUNDED || max > 1) && nullable(p, atom)) {
                return fail_parse(p, "a repeated part of the regex can match nothing");
            }
            p->nodes[rep].min = min;
            p->nodes[rep].max = max;
            p->nodes[rep].first = atom;
            atom = rep;
        }
        if (atom < 0 || p->why) {
            return -1;
        }
        if (last < 0) {
            p->nodes[seq].first = atom;
        } else {
            p->nodes[last].next = atom;
        }
        last = atom;
    }
    return seq;
}

static int parse_alternation(parser *p)
{
    int alt = new_node(p, N_ALT);
    int last = -1;
    for (;;) {
        int seq = alt < 0 ? -1 : parse_sequence(p);
        if (seq < 0) {
            return -1;
        }
        if (last < 0) {
            p->nodes[alt].first = seq;
        } else {
            p->nodes[last].next = seq;
        }
        last = seq;
        if (p->pos < p->n && p->u[p->pos] == '|') {
            p->pos++;
            continue;
        }
        return alt;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Compiling                                                                                  */

typedef struct emitter {
    inst *insts;
    int n;
    const parser *p;
    bool overflow;
} emitter;

static int emit(emitter *e, inst in)
{
    if (e->n == MAX_INSTS) {
        e->overflow = true;
        return e->n - 1;
    }
    e->insts[e->n] = in;
    return e->n++;
}

static void emit_node(emitter *e, int nd);

static void emit_repeat(emitter *e, const node *n)
{
    const node *child = &e->p->nodes[n->first];
    if (child->kind == N_CLASS) {
        emit(e, (inst){.op = I_RUN, .a = child->value, .min = n->min, .max = n->max});
        return;
    }
    for (int i = 0; i < n->min; i++) {
        emit_node(e, n->first);
    }
    if (n->max == UNBOUNDED) {
        int split = emit(e, (inst){.op = I_SPLIT});
        e->insts[split].a = e->n;
        emit_node(e, n->first);
        emit(e, (inst){.op = I_JMP, .a = split});
        e->insts[split].b = e->n;
        return;
    }
    int splits[64];
    int n_optional = n->max - n->min;
    if (n_optional > 64) {
        e->overflow = true;
        return;
    }
    for (int i = 0; i < n_optional; i++) {
        splits[i] = emit(e, (inst){.op = I_SPLIT});
        e->insts[splits[i]].a = e->n;
        emit_node(e, n->first);
    }
    for (int i = 0; i < n_optional; i++) {
        e->insts[splits[i]].b = e->n;
    }
}

static void emit_node(emitter *e, int nd)
{
    const node *n = &e->p->nodes[nd];
    switch (n->kind) {
    case N_CLASS:
        emit(e, (inst){.op = I_CLASS, .a = n->value});
        break;
    case N_SEQ:
        for (int c = n->first; c >= 0; c = e->p->nodes[c].next) {
            emit_node(e, c);
        }
        break;
    case N_ALT: {
        int jumps[256], n_jumps = 0;
        for (int c = n->first; c >= 0; c = e->p->nodes[c].next) {
            int split = -1;
            if (e->p->nodes[c].next >= 0) {
                split = emit(e, (inst){.op = I_SPLIT});
                e->insts[split].a = e->n;
            }
            emit_node(e, c);
            if (split >= 0) {
                if (n_jumps == 256) {
                    e->overflow = true;
                    return;
                }
                jumps[n_jumps++] = emit(e, (inst){.op = I_JMP});
                e->insts[split].b = e->n;
            }
        }
        for (int i = 0; i < n_jumps; i++) {
            e->insts[jumps[i]].a = e->n;
        }
        break;
    }
    case N_REPEAT:
        emit_repeat(e, n);
        break;
    case N_LOOK: {
        int look = emit(e, (inst){.op = I_LOOK, .negative = (uint8_t)n->value});
        e->insts[look].a = e->n;
        emit_node(e, n->first);
        emit(e, (inst){.op = I_MATCH});
        e->insts[look].b = e->n;
        break;
    }
    case N_END:
        emit(e, (inst){.op = I_EOL});
        break;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* The pattern as units: code points, or llama.cpp's collapsed bytes                          */

typedef struct category {
    const char *name;   /* as written in a pattern */
    unsigned marker;    /* the collapsed byte of its non-ASCII members */
    const char *ascii;  /* its ASCII members, as bracket content */
} category;

static const category categories[] = {
    {"\\p{N}", 0xD1, "0-9"},
    {"\\p{L}", 0xD2, "A-Za-z"},
    {"\\p{P}", 0xD3, "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}"},
    {"\\p{M}", 0xD4, ""},
    {"\\p{S}", 0xD5, "\\$\\+<->\\^`\\|"},
    {"\\p{Lu}", 0xD2, "A-Za-z"},
    {"\\p{Ll}", 0xD2, "A-Za-z"},
    {"\\p{Lt}", 0xD2, "A-Za-z"},
    {"\\p{Lm}", 0xD2, "A-Za-z"},
    {"\\p{Lo}", 0xD2, "A-Za-z"},
};
enum { N_CATEGORIES = sizeof categories / sizeof categories[0] };

static const category *category_at(const char *s, size_t len)
{
    for (int i = 0; i < N_CATEGORIES; i++) {
        if (strlen(categories[i].name) == len && memcmp(categories[i].name, s, len) == 0) {
            return &categories[i];
        }
    }
    return NULL;
}

static bool uses_categories(const char *pattern)
{
    for (int i = 0; i < N_CATEGORIES; i++) {
        if (strstr(pattern, categories[i].name)) {
            return true;
        }
    }
    return false;
}

static bool push_unit(uint32_t *u, size_t *n, uint32_t unit)
{
    if (*n == MAX_UNITS) {
        return false;
    }
    u[(*n)++] = unit;
    return true;
}

/* The collapsed pattern: each known \p{...} becomes its marker byte and ASCII members, wrapped
 * in [...] when it stands outside a bracket. Brackets are tracked as llama.cpp tracks them (an
 * unescaped '[' opens, an unescaped ']' inside closes). */
static bool collapse_pattern(const char *s, uint32_t *u, size_t *n, const char **why)
{
    size_t len = strlen(s);
    bool inside = false, ok = true;
    for (size_t i = 0; i < len && ok; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            *why = "regex mixes \\p{...} classes with non-ASCII characters";
            return false;
        }
        if (c == '[' && (i == 0 || s[i - 1] != '\\')) {
            inside = true;
        } else if (inside && c == ']' && s[i - 1] != '\\') {
            inside = false;
        } else if (c == '\\' && i + 3 < len && s[i + 1] == 'p' && s[i + 2] == '{') {
            const char *close = strchr(s + i + 3, '}');
            const category *cat = (close && (size_t)(close - s) <= i + 10) ? category_at(s + i, (size_t)(close - s) - i + 1) : NULL;
            if (cat) {
                ok = (inside || push_unit(u, n, '[')) && push_unit(u, n, cat->marker);
                for (const char *a = cat->ascii; *a && ok; a++) {
                    ok = push_unit(u, n, (unsigned char)*a);
                }
                ok = ok && (inside || push_unit(u, n, ']'));
                i = (size_t)(close - s);
                continue;
            }
        }
        ok = push_unit(u, n, c);
    }
    if (!ok) {
        *why = "regex too long";
    }
    return ok;
}

static bool decode_pattern(const char *s, uint32_t *u, size_t *n, const char **why)
{
    size_t len = strlen(s);
    if (len > MAX_UNITS) {
        *why = "regex too long";
        return false;
    }
    *n = inf_utf8_decode(s, len, u);
    return true;
}

pre_regex *pre_regex_compile(const char *pattern, const char **why)
{
    *why = NULL;
    pre_regex *re = calloc(1, sizeof *re);
    uint32_t *units = malloc(MAX_UNITS * sizeof *units);
    parser *p = calloc(1, sizeof *p);
    char_class *classes = malloc(MAX_CLASSES * sizeof *classes);
    inst *insts = malloc(MAX_INSTS * sizeof *insts);
    size_t n_units = 0;
    bool ok = re && units && p && classes && insts;
    if (!ok) {
        *why = "out of memory";
    }
    if (ok) {
        re->collapsed = uses_categories(pattern);
        ok = re->collapsed ? collapse_pattern(pattern, units, &n_units, why) : decode_pattern(pattern, units, &n_units, why);
    }
    if (ok) {
        *p = (parser){.u = units, .n = n_units, .classes = classes};
        int root = parse_alternation(p);
        if (root >= 0 && p->pos != p->n) {
            root = fail_parse(p, "unbalanced parenthesis");
        }
        ok = root >= 0;
        *why = p->why;
        if (ok) {
            emitter e = {insts, 0, p, false};
            emit_node(&e, root);
            emit(&e, (inst){.op = I_MATCH});
            ok = !e.overflow;
            *why = ok ? NULL : "regex too large";
            re->n_insts = e.n;
        }
    }
    if (ok) {
        re->insts = realloc(insts, (size_t)re->n_insts * sizeof *insts);
        re->n_classes = p->n_classes;
        re->classes = realloc(classes, (size_t)(p->n_classes ? p->n_classes : 1) * sizeof *classes);
        ok = re->insts && re->classes;
        insts = re->insts ? NULL : insts;
        classes = re->classes ? NULL : classes;
    }
    free(units);
    free(p);
    if (!ok) {
        free(insts);
        free(classes);
        pre_regex_free(re);
        return NULL;
    }
    return re;
}

void pre_regex_free(pre_regex *re)
{
    if (re) {
        free(re->insts);
        free(re->classes);
        free(re);
    }
}

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
